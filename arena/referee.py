"""The referee of one match: the engine, the clock and the fault policy, with no I/O.

A ``Referee`` is a small state machine that a conductor drives: ``decision()`` names the
request to send, ``answer()`` takes the bot's action with its measured time, ``fault()`` takes
a fault the conductor observed (timeout, crash, malformed bytes...). Both return the
notifications to deliver. The referee knows nothing about processes or sockets.

``Refereeing`` is that interface as the conductor sees it; the validation suite's
``ProbeReferee`` implements it too. ``fault_record`` is how the conductor turns what it saw
into a ``Fault``: the referee fills in the match's hand index and clock, through
``build_fault``, the one place a fault record is assembled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from arena.clock import MatchClock, TimeControl
from arena.engine import Hand, HandResult, IllegalAction, Match, Rules
from arena.engine.match import match_view
from arena.engine.records import Fault, FaultKind, HandRecord, MatchOutcome, Think
from arena.faults import FaultPolicy, truncate

# Faults after which the bot cannot go on, so even the lenient policy forfeits the match.
_FATAL = frozenset({FaultKind.CRASH, FaultKind.DISCONNECT, FaultKind.PROTOCOL})


@dataclass(slots=True)
class Decision:
    """A request the conductor must get answered: ``seat`` is to move in the match (one per
    decision: not frozen, whose ``__init__`` costs three times as much; treat it as read-only)."""

    match_id: str
    seat: int
    view: dict[str, Any]
    legal_actions: list[str]
    time_limit_ms: int
    bank_ms: int
    budget_s: float


@dataclass(frozen=True, slots=True)
class FaultNote:
    """What ``match_over`` tells both bots of the fault that ended a match (protocol/PROTOCOL.md
    section 9): the seat charged (None: the harness's), the kind and the detail."""

    seat: int | None
    kind: FaultKind
    detail: str

    @classmethod
    def of(cls, fault: Fault) -> FaultNote:
        """The note of ``fault``."""
        return cls(fault.seat, fault.kind, fault.detail)

    def to_wire(self) -> dict[str, Any]:
        """The ``fault`` object of a ``match_over`` message."""
        return {"seat": self.seat, "kind": str(self.kind), "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Notice:
    """A notification for one seat: ``hand_over`` (with the final view) or ``match_over``."""

    seat: int
    kind: str
    view: dict[str, Any] | None = None
    score: tuple[int, int] = (0, 0)
    carry: int = 0
    winner: int | None = None
    hands: int = 0
    forfeit: bool = False
    fault: FaultNote | None = None


def build_fault(kind: FaultKind, seat: int, detail: str, *, bot: str, match_id: str, hand_index: int,
                clock: MatchClock, request: str | bytes | None, reply: str | bytes | None,
                elapsed_s: float | None, bank_ms: int | None = None, dropped_replies: int = 0,
                exit: str | None = None, stderr_tail: str | None = None) -> Fault:
    """A fault of ``seat`` with its evidence; the one place a ``Fault`` record is assembled.

    ``request`` and ``reply`` are the bytes on the wire (cut to ``MAX_RAW_CHARS`` here) or text
    already cut. The clock fields are set only for a timed request (``elapsed_s`` given):
    the limit, and ``bank_ms``, by default the seat's bank left now (unchanged while a request
    is outstanding: only an answer charges the clock).
    """
    timed = elapsed_s is not None
    return Fault(
        kind=kind, seat=seat, bot=bot, detail=detail, match_id=match_id, hand_index=hand_index,
        request=truncate(request) if isinstance(request, bytes) else request,
        reply=truncate(reply) if isinstance(reply, bytes) else reply,
        elapsed_ms=round(elapsed_s * 1000.0, 3) if elapsed_s is not None else None,
        time_limit_ms=clock.control.time_limit_ms if timed else None,
        bank_ms=(clock.bank_left_ms(seat) if bank_ms is None else bank_ms) if timed else None,
        dropped_replies=dropped_replies, exit=exit, stderr_tail=stderr_tail,
    )


class Refereeing(Protocol):
    """What the conductor needs of a referee: the requests to send, and the answers, faults
    and outcome of one game. Implemented by ``Referee`` and the validation suite's
    ``ProbeReferee``; the conductor reaches nothing else of them."""

    @property
    def match_id(self) -> str:
        """The game's id on the wire (``game_id``)."""
        ...

    def decision(self) -> Decision | None:
        """The request to send next, or None once the game is finished."""
        ...

    def answer(self, action: str, elapsed_s: float, raw: bytes | None = None, *, request: bytes | None = None,
               stderr_tail: Callable[[], str | None] | None = None, cpu_s: float | None = None) -> list[Notice]:
        """The seat asked by the last decision answered ``action`` after ``elapsed_s`` seconds."""
        ...

    def fault(self, fault: Fault) -> list[Notice]:
        """Record a fault the conductor observed and apply the policy to it."""
        ...

    def fault_record(self, kind: FaultKind, seat: int, detail: str, *, request: str | bytes | None,
                     reply: str | bytes | None, elapsed_s: float | None, dropped_replies: int = 0,
                     exit: str | None = None, stderr_tail: str | None = None) -> Fault:
        """A fault of ``seat`` in this game, with the hand index and clock fields filled in."""
        ...

    def outcome(self) -> MatchOutcome:
        """The game's result (call once finished)."""
        ...


class Referee:
    """Referees one seeded match between seat 0 (``names[0]``) and seat 1."""

    def __init__(
        self,
        match_id: str,
        seed: int | str,
        rules: Rules,
        names: tuple[str, str],
        time_control: TimeControl | None = None,
        policy: FaultPolicy = FaultPolicy.STRICT,
    ) -> None:
        self.match_id = match_id
        self.seed = seed
        self.rules = rules
        self.names = names
        self.policy = FaultPolicy(policy)
        self.clock = MatchClock(time_control or TimeControl())
        self.match = Match(rules, seed=seed)
        self.faults: list[Fault] = []
        self.think_ms: list[Think] = []
        self._forfeit_by: int | None = None
        self._void = False
        self._outcome: MatchOutcome | None = None  # the finished match's, made once (until another fault)

    # ------------------------------------------------------------------ state

    @property
    def finished(self) -> bool:
        """Whether the match is over (played out, forfeited or void)."""
        return self._void or self._forfeit_by is not None or self.match.is_over

    def decision(self) -> Decision | None:
        """The pending decision, or None once the match is finished."""
        if self.finished:
            return None
        match = self.match
        seat = match.hand.to_move
        assert seat is not None
        view = match_view(match.hand, seat, hand_index=match.hand_index, score=match.score, carry=match.carry,
                          target=self.rules.match_target, private=False)  # encoded at once by the conductor
        return Decision(
            match_id=self.match_id,
            seat=seat,
            view=view,
            legal_actions=view["legal_actions"],
            time_limit_ms=self.clock.control.time_limit_ms,
            bank_ms=self.clock.bank_left_ms(seat),
            budget_s=self.clock.budget_s(seat),
        )

    # ------------------------------------------------------------------ inputs

    def answer(self, action: str, elapsed_s: float, raw: bytes | None = None, *, request: bytes | None = None,
               stderr_tail: Callable[[], str | None] | None = None, cpu_s: float | None = None) -> list[Notice]:
        """The seat to move answered ``action`` after ``elapsed_s`` seconds (``cpu_s`` of CPU
        time, when measured).

        ``request`` (the bytes sent) and ``stderr_tail`` (read only if a fault is recorded)
        are evidence for the fault record.
        """
        if self.finished:
            raise RuntimeError(f"match {self.match_id} is finished; no answer is expected")
        seat = self.match.hand.to_move
        assert seat is not None
        bank_before = self.clock.bank_left_ms(seat)
        if not self.clock.charge(seat, elapsed_s):
            kind, detail = FaultKind.TIMEOUT, "answered after the limit plus the bank"
        else:
            try:
                return self._apply(action, seat, elapsed_s, cpu_s)
            except IllegalAction as exc:
                kind, detail = FaultKind.ILLEGAL, str(exc)
        return self.fault(build_fault(
            kind, seat, detail, bot=self.names[seat], match_id=self.match_id, hand_index=self.match.hand_index,
            clock=self.clock, request=request or truncate(repr(self.match.hand.legal_actions())), reply=raw,
            elapsed_s=elapsed_s, bank_ms=bank_before, stderr_tail=stderr_tail() if stderr_tail else None,
        ))

    def fault(self, fault: Fault) -> list[Notice]:
        """Record a fault the conductor observed and apply the policy to it."""
        self.faults.append(fault)
        self._outcome = None
        if fault.kind is FaultKind.HARNESS:
            self._void = True
            return self._match_over_notices(fault)
        seat = fault.seat
        if seat is None or self.finished:
            return []
        lenient = self.policy is FaultPolicy.LENIENT and fault.kind not in _FATAL
        if lenient and self.match.hand.to_move == seat:
            return self._apply(self.match.hand.legal_actions()[0], seat, None)
        if lenient:
            return []
        self._forfeit_by = seat
        return self._match_over_notices(fault)

    def fault_record(self, kind: FaultKind, seat: int, detail: str, *, request: str | bytes | None,
                     reply: str | bytes | None, elapsed_s: float | None, dropped_replies: int = 0,
                     exit: str | None = None, stderr_tail: str | None = None) -> Fault:
        """A fault of ``seat`` now, in the current hand (see ``build_fault``)."""
        return build_fault(kind, seat, detail, bot=self.names[seat], match_id=self.match_id,
                           hand_index=self.match.hand_index, clock=self.clock, request=request, reply=reply,
                           elapsed_s=elapsed_s, dropped_replies=dropped_replies, exit=exit,
                           stderr_tail=stderr_tail)

    def _apply(self, action: str, seat: int, elapsed_s: float | None, cpu_s: float | None = None) -> list[Notice]:
        match = self.match
        hand: Hand = match.hand
        hand_index, score_before, carry_before = match.hand_index, match.score, match.carry
        result = match.apply(action)
        if elapsed_s is not None:
            self.think_ms.append(Think(seat, hand_index, elapsed_s * 1000.0, None if cpu_s is None else cpu_s * 1000.0))
        if result is None:
            return []
        notices = [
            Notice(seat=s, kind="hand_over",
                   view=match_view(hand, s, hand_index=hand_index, score=score_before, carry=carry_before,
                                   target=self.rules.match_target, private=False),
                   score=match.score, carry=match.carry)
            for s in (0, 1)
        ]
        if match.is_over:
            notices.extend(self._match_over_notices(None))
        return notices

    def _match_over_notices(self, fault: Fault | None) -> list[Notice]:
        outcome = self.outcome()
        note = None if fault is None else FaultNote.of(fault)
        return [
            Notice(seat=s, kind="match_over", score=outcome.score, winner=outcome.winner,
                   hands=len(outcome.results), forfeit=outcome.forfeit, fault=note)
            for s in (0, 1)
        ]

    # ------------------------------------------------------------------ result

    def outcome(self) -> MatchOutcome:
        """The match as the store keeps it (call once finished; made once while nothing changes)."""
        if self._outcome is not None:
            return self._outcome
        match = self.match
        if self._void:
            winner = None
        elif self._forfeit_by is not None:
            winner = 1 - self._forfeit_by
        else:
            winner = match.winner
        interrupted = None
        if not match.is_over:
            current = match.hand.record()
            if current["actions"]:
                interrupted = HandRecord.of(current, self.rules)
        outcome = MatchOutcome(
            match_id=self.match_id,
            seed=self.seed,
            names=self.names,
            rules=self.rules,
            winner=winner,
            score=match.score,
            forfeit=self._forfeit_by is not None,
            void=self._void,
            faults=tuple(self.faults),
            results=tuple(match.results),
            records=tuple(HandRecord.of(record, self.rules) for record in match.records),
            think_ms=tuple(self.think_ms),
            interrupted=interrupted,
        )
        if self.finished:
            self._outcome = outcome
        return outcome
