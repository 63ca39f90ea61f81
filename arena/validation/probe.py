"""Probe games: a bot asked about explicit positions, driven by the arena's own conductor.

A ``ProbeReferee`` implements the conductor's ``Refereeing`` interface for a game that is one
hand starting at a ``Position`` (it plays no ``Match``, so it is no ``Referee``): the bot
under test plays the seat to move there, and an in-process seeded random policy plays the
other seat without being asked. The conductor (``arena.conductor.play_matches``) sends the
requests, enforces the deadlines, drops stray ``seq``s and turns crashes, resets and bad
bytes into faults, exactly as in a tournament. The game ends with a ``hand_over`` and a void
``match_over`` (PROTOCOL.md section 12), or earlier with the first fault or illegal answer.

``Traffic`` records every message sent to and received from a session, so a failing step
can show what was sent and what came back, stray replies included.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from arena.clock import MatchClock, TimeControl
from arena.conductor import play_matches
from arena.engine import Hand, Rules
from arena.engine.match import match_view
from arena.engine.records import Fault, FaultKind, HandRecord, MatchOutcome
from arena.referee import Decision, FaultNote, Notice, build_fault
from arena.session import RECEIVE_BATCH, BotSession
from arena.validation.positions import Position

VOID_DETAIL = "validation game: it ends here"


class Traffic:
    """Every message to and from one session, in order: ``("sent" | "received", bytes)``.

    Installed by wrapping the session object's ``send`` and ``receive`` (the conductor's
    only ways in and out), so nothing in the session or conductor changes.
    """

    def __init__(self, session: BotSession) -> None:
        self.log: list[tuple[str, bytes]] = []
        send, receive = session.send, session.receive

        def recording_send(payload: bytes) -> bool:
            self.log.append(("sent", payload))
            return send(payload)

        def recording_receive(limit: int = RECEIVE_BATCH) -> list[bytes]:
            messages = receive(limit)
            self.log.extend(("received", m) for m in messages)
            return messages

        setattr(session, "send", recording_send)
        setattr(session, "receive", recording_receive)

    def mark(self) -> int:
        """A position in the log, to look at what came after it."""
        return len(self.log)

    def last_exchange(self, game_id: str, since: int = 0) -> tuple[bytes | None, list[bytes]]:
        """The last request sent for ``game_id`` after ``since``, and every message received after it."""
        sent: bytes | None = None
        received: list[bytes] = []
        for direction, raw in self.log[since:]:
            if direction == "sent":
                if _field(raw, "type") == "request" and _field(raw, "game_id") == game_id:
                    sent, received = raw, []
            elif sent is not None:
                received.append(raw)
        return sent, received


def _field(raw: bytes, key: str) -> Any:
    try:
        msg = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return msg.get(key) if isinstance(msg, dict) else None


@dataclass(slots=True)
class Answer:
    """One decision the bot was asked, and what it answered."""

    legal_actions: list[str]
    action: str
    elapsed_ms: float
    legal: bool


class ProbeReferee:
    """Referees one probe game: ``position``'s hand, the bot on the seat to move there.

    With ``playout`` the hand is played to its end (the bot answers every decision of its
    seat); without it the game ends after the bot's first answer. An illegal answer or any
    fault ends the game; ``problem`` then holds the fault. Implements ``Refereeing``.
    """

    def __init__(self, game_id: str, position: Position, *, bot_name: str, time_control: TimeControl,
                 rules: Rules | None = None, playout: bool = True) -> None:
        rules = rules or Rules()
        self.match_id = game_id
        self.rules = rules
        self.bot_name = bot_name
        self.clock = MatchClock(time_control)
        self.faults: list[Fault] = []
        self.position = position
        self.hand: Hand = position.hand(rules)
        self.bot_seat = self.hand.to_move if self.hand.to_move is not None else 0
        self.playout = playout
        self.rng = random.Random(game_id)
        self.answers: list[Answer] = []
        self.problem: Fault | None = None
        self.done = False

    # ------------------------------------------------------------------ Refereeing

    def decision(self) -> Decision | None:
        """The bot's pending decision, or None once the game is over."""
        if self.done:
            return None
        view = self._view()
        return Decision(
            match_id=self.match_id, seat=self.bot_seat, view=view, legal_actions=view["legal_actions"],
            time_limit_ms=self.clock.control.time_limit_ms, bank_ms=self.clock.bank_left_ms(self.bot_seat),
            budget_s=self.clock.budget_s(self.bot_seat),
        )

    def answer(self, action: str, elapsed_s: float, raw: bytes | None = None, *, request: bytes | None = None,
               stderr_tail: Callable[[], str | None] | None = None, cpu_s: float | None = None) -> list[Notice]:
        """Check and apply the bot's answer, then play the opponent until the bot is asked again.
        (The stderr tail and CPU time are not needed here.)"""
        if self.done:
            raise RuntimeError(f"probe game {self.match_id} is over; no answer is expected")
        legal = self.hand.legal_actions()
        bank_before = self.clock.bank_left_ms(self.bot_seat)
        in_time = self.clock.charge(self.bot_seat, elapsed_s)
        ok = action in legal
        self.answers.append(Answer(legal, action, round(elapsed_s * 1000.0, 3), ok))
        if not in_time or not ok:
            kind, detail = ((FaultKind.TIMEOUT, "answered after the limit plus the bank") if not in_time
                            else (FaultKind.ILLEGAL, f"{action!r} is not legal here; legal: {legal}"))
            fault = build_fault(kind, self.bot_seat, detail, bot=self.bot_name, match_id=self.match_id, hand_index=0,
                                clock=self.clock, request=request, reply=raw, elapsed_s=elapsed_s, bank_ms=bank_before)
            self.faults.append(fault)
            self.problem = fault
            return self._end_game(fault)
        self.hand.apply(action)
        if not self.playout and not self.hand.is_over:
            return self._end_game()
        return self._play_opponent()

    def fault(self, fault: Fault) -> list[Notice]:
        """A fault the conductor saw (timeout, crash, bad bytes...): the game ends."""
        self.faults.append(fault)
        if self.done:
            return []
        self.problem = self.problem or fault
        return self._end_game(fault)

    def fault_record(self, kind: FaultKind, seat: int, detail: str, *, request: str | bytes | None,
                     reply: str | bytes | None, elapsed_s: float | None, dropped_replies: int = 0,
                     exit: str | None = None, stderr_tail: str | None = None) -> Fault:
        """A fault of the bot in this probe game (its one hand has index 0)."""
        return build_fault(kind, seat, detail, bot=self.bot_name, match_id=self.match_id, hand_index=0,
                           clock=self.clock, request=request, reply=reply, elapsed_s=elapsed_s,
                           dropped_replies=dropped_replies, exit=exit, stderr_tail=stderr_tail)

    def outcome(self) -> MatchOutcome:
        """The probe game as a void match: nobody wins a probe; ``forfeit`` if the bot faulted."""
        result = self.hand.result
        return MatchOutcome(
            match_id=self.match_id, seed=self.match_id, names=(self.bot_name, self.bot_name),
            rules=self.rules, winner=None, score=(0, 0), forfeit=self.problem is not None, void=True,
            faults=tuple(self.faults), results=() if result is None else (result,),
            records=(HandRecord.of(self.hand.record(), self.hand.rules),),
        )

    # ------------------------------------------------------------------ inside

    def start(self) -> None:
        """Play the opponent's moves up to the bot's first decision (none at a probe position)."""
        self._play_opponent()

    def _view(self) -> dict[str, Any]:
        return match_view(self.hand, self.bot_seat, hand_index=0, score=(0, 0), carry=0,
                          target=self.rules.match_target)

    def _play_opponent(self) -> list[Notice]:
        hand = self.hand
        while not hand.is_over and hand.to_move != self.bot_seat:
            legal = hand.legal_actions()
            seat = hand.to_move
            assert seat is not None
            if "declare" in legal and hand.total(seat) >= 66:
                hand.apply("declare")
            else:
                hand.apply(self.rng.choice([a for a in legal if a != "declare"] or legal))
        if not hand.is_over:
            return []
        result = hand.result
        assert result is not None
        score = [0, 0]
        if result.winner is not None:
            score[result.winner] = result.game_points
        hand_over = Notice(seat=self.bot_seat, kind="hand_over", view=self._view(),
                           score=(score[0], score[1]), carry=0 if result.winner is not None else 1)
        return [hand_over, *self._end_game()]

    def _end_game(self, fault: Fault | None = None) -> list[Notice]:
        """End the game with a void ``match_over`` (winner null, a harness note)."""
        self.done = True
        if fault is not None and fault.kind is not FaultKind.HARNESS:
            note = FaultNote(self.bot_seat, fault.kind, fault.detail)
            return [Notice(seat=self.bot_seat, kind="match_over", winner=1 - self.bot_seat,
                           hands=0, forfeit=True, fault=note)]
        note = FaultNote(None, FaultKind.HARNESS, VOID_DETAIL)
        return [Notice(seat=self.bot_seat, kind="match_over", winner=None, hands=0, fault=note)]


def run_probes(session: BotSession, referees: list[ProbeReferee]) -> None:
    """Play the probe games on ``session`` at once (interleaved when there are several)."""
    for referee in referees:
        referee.start()
    play_matches([(referee, (session, session)) for referee in referees])
