"""The conductor: drives referees over bot sessions with one poll loop and every deadline.

Any number of matches run at once; each seat is a ``BotSession``. A session with
``max_games > 1`` may serve several matches interleaved (requests carry ``game_id`` and a
per-link ``seq``). A ``GameFeed`` may admit new matches whenever one ends (refill), so the
processes stay busy until the feed runs dry instead of waiting for the longest match. Replies
are matched by ``seq``; a stale or never-issued ``seq`` is dropped and counted, so a late
answer becomes a clean timeout. Deaths and link resets become faults for every match the
session was in.

Nothing a bot does makes the loop wait with other bots' clocks running. A match may be
admitted on processes still starting: their handshakes are steps of this same loop
(``BotSession.shake``), each within its own limit, and the match's first request goes out once
both seats are greeted, while the other matches play on. What the loop does between rounds
(the feed starting and closing processes, or waiting a moment to tell a crash from a
disconnect) stops the clocks of the requests out meanwhile (``_stopped_clocks``); through a
kill, a lost bot's wait or a process started or closed by the feed, the bots thinking are frozen
as well (``_paused``, ``_slow_step``), so nobody thinks on time that is nobody's. A request's
clock starts once its bot is thawed: a thaw can take a millisecond on a busy machine, during
which the bot cannot think. Bots already thawed are thinking meanwhile, so their clocks run on.

Fair polling: a session's link is polled only while it owes an answer (``_owe`` and
``_settle`` mark those moments), so whatever a bot sends while its opponent thinks waits in
its own bounded queue and costs the others nothing; and each round reads at most
``RECEIVE_BATCH`` messages per link, so one link's backlog cannot starve the rest. Every
session's monitor is polled while it plays: a bot that dies is noticed at any time.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

import zmq

from arena.engine.records import Fault, FaultKind, MatchOutcome
from arena.referee import Notice, Refereeing
from arena.session import RECEIVE_BATCH, BotSession, SlowStep
from protocol import ProtocolError, make_hand_over, make_match_over, make_request, parse_reply

log = logging.getLogger(__name__)

_LIVENESS_S = 0.25  # how often a waiting conductor checks that busy bots are still alive
_rounds = itertools.count()  # poll rounds of every conductor in this process: a session outlives its conductor


@dataclass(slots=True)
class _Pending:
    game: _Game
    seat: int
    budget_s: float
    request: bytes
    cpu_ns: int | None = None  # the bot's CPU counter when the request was sent
    sent_at: float | None = None  # both set in ``_flush`` right after the bot's thaw, as the request goes out
    deadline: float = math.inf
    settled: bool = False  # answered or faulted (a request settled before its round's flush is not sent)

    def elapsed(self, now: float) -> float | None:
        """Seconds since the request went out; None while it is queued."""
        return None if self.sent_at is None else now - self.sent_at


@dataclass(slots=True)
class _Game:
    referee: Refereeing
    sessions: tuple[BotSession, BotSession]
    waiting: bool = False
    seating: bool = False  # a seat's process is still starting: the first request waits for its hello
    done: bool = False
    notices: list[Notice] = field(default_factory=list)


Seated = tuple[Refereeing, tuple[BotSession, BotSession]]


class GameFeed(Protocol):
    """Where a refilling conductor gets its matches, and tells when one ended."""

    def admit(self, playing: int) -> Sequence[Seated]:
        """Matches to start now, ``playing`` being in progress (asked at the start and after every end)."""
        ...

    def ended(self, seated: Seated, outcome: MatchOutcome) -> None:
        """A match ended: its sessions may take another one (or be closed)."""
        ...

    def set_slow_step(self, slow_step: SlowStep) -> None:
        """What the feed runs each start or close of a process inside, from now on (the conductor
        freezes the bots thinking for it)."""
        ...


class _Given:
    """The feed of a fixed list of matches: all at once, nothing to do when one ends."""

    def __init__(self, games: list[Seated]) -> None:
        self.games: list[Seated] | None = games

    def admit(self, playing: int) -> list[Seated]:
        games, self.games = self.games or [], None
        return games

    def ended(self, seated: Seated, outcome: MatchOutcome) -> None:
        return None

    def set_slow_step(self, slow_step: SlowStep) -> None:
        return None  # it starts and closes no process


def play_matches(games: list[Seated]) -> list[MatchOutcome]:
    """Play every match to its end; outcomes in the order given."""
    return play_fed(_Given(games))


def play_fed(feed: GameFeed) -> list[MatchOutcome]:
    """Play the matches ``feed`` admits until it admits none and all have ended; outcomes in
    the order admitted. The feed hears of each end before it is asked for more."""
    return _Conductor(feed).run()


class _Conductor:
    def __init__(self, feed: GameFeed) -> None:
        self.feed = feed
        self.games: list[_Game] = []
        self.playing: list[_Game] = []  # admitted and not ended
        self.ended: list[_Game] = []  # ended, not yet reported to the feed
        self.sessions: list[BotSession] = []  # the sessions of the games in play
        self.starting: list[BotSession] = []  # those of them still shaking hands
        self.greeted = False  # a handshake ended since the feed was last asked (a process may have room)
        self.pending: dict[tuple[int, int], _Pending] = {}  # (id(session), seq) -> request
        self.owed: dict[int, int] = {}  # id(session) -> requests it has not answered yet
        self.poller = zmq.Poller()
        self.by_socket: dict[zmq.Socket[bytes], tuple[BotSession, bool]] = {}
        self.round = next(_rounds)  # this poll round: a bot's CPU counter is read at most once per round
        self.answered: list[BotSession] = []  # sessions that answered this round: frozen before the next poll
        self.outbox: list[tuple[BotSession, bytes, _Pending | None]] = []  # what the round sends, in order
        self.frozen_for_feed: list[BotSession] | None = None  # in _admit: bots frozen for the feed's slow steps
        feed.set_slow_step(self._slow_step)

    def run(self) -> list[MatchOutcome]:
        try:
            self._play()
        finally:  # also when a harness failure ends the loop: no bot is left running
            self._abandon()
            self._freeze_idle()
        return [game.referee.outcome() for game in self.games]

    def _abandon(self) -> None:
        """Settle the requests still out (only a harness failure leaves any) and freeze their bots:
        a bot goes back to its pool owing nothing. Otherwise it would count an answer nobody will
        read, never owe nothing again, and think on its opponents' time in every later match."""
        for key, pending in list(self.pending.items()):
            session = pending.game.sessions[pending.seat]
            try:
                self._settle(session, key)
                if pending.sent_at is not None:  # it was thawed for it
                    session.end_request(self.round)
                session.freeze_if_idle()
            except Exception:  # never hide the failure that ended the loop behind one of its own
                log.exception("could not settle request %s of %s", key[1], session.name)

    def _play(self) -> None:
        self._admit()
        next_liveness = time.monotonic() + _LIVENESS_S
        while self.playing:
            self._flush()
            events = self.poller.poll(math.ceil(self._next_wait() * 1000.0))
            self.round = next(_rounds)
            now = time.monotonic()
            for sock, _ in events:
                session, is_monitor = self.by_socket[sock]
                if session.starting:
                    if self._shake(session, now):
                        now = time.monotonic()  # the clocks stopped for its kill: read what comes next at the time
                    continue
                if is_monitor:
                    if session.link_lost() and session.alive:
                        self._lost(session)
                        now = time.monotonic()  # the clocks stopped during its wait: read what comes next at the time
                    continue
                for raw in session.receive(RECEIVE_BATCH):
                    if not session.alive:
                        break
                    if self._on_message(session, raw, now):
                        now = time.monotonic()  # the clocks stopped for its kill: read the next messages at the time
            self._freeze_idle()
            now = time.monotonic()
            self._expire(now)
            if not events or now >= next_liveness:  # also while a busy link keeps the poll awake
                self._check_liveness(now)
                next_liveness = now + _LIVENESS_S
            if self.ended or self.greeted:
                self._admit()
        self._flush()  # the last matches' match_over

    def _freeze_idle(self) -> None:
        """Freeze the bots that answered and owe nothing now, not even a request the round
        queued. Called once the round's messages are handled, and before anything that may wait
        (a death, starting processes), not at each answer: a bot asked again at once (the same
        game after its own move or an instant reply, or another of its games) is not frozen and
        thawed for nothing."""
        for session in self.answered:
            if not self.owed.get(id(session)):
                session.freeze_if_idle()
        self.answered.clear()

    # ------------------------------------------------------------------ admitting

    def _admit(self) -> None:
        """Between poll rounds (never mid-dispatch): stop polling the sessions no game in play
        uses, tell the feed which games ended, then start what it admits, until it admits none.
        The clocks of the requests out stop meanwhile: the feed may start and close processes."""
        self.greeted = False
        while True:
            self._flush()  # the ended games' last messages (each pass), before the feed may close their processes
            self._freeze_idle()  # the feed may close processes or start new ones
            in_use = {id(s) for game in self.playing for s in game.sessions}
            for session in [s for s in self.sessions if id(s) not in in_use]:
                self._forget(session)
            with self._stopped_clocks(), self._feed_steps():
                for game in self.ended:
                    self.feed.ended((game.referee, game.sessions), game.referee.outcome())
                self.ended.clear()
                games = [_Game(referee, sessions) for referee, sessions in self.feed.admit(len(self.playing))]
            if not games:
                return
            for game in games:
                self.games.append(game)
                self.playing.append(game)
                for session in game.sessions:
                    if session not in self.sessions:
                        self._watch(session)
                game.seating = any(session.starting for session in game.sessions)
            for game in games:
                self._dispatch(game)

    @contextmanager
    def _stopped_clocks(self) -> Iterator[None]:
        """The time spent inside is nobody's: the requests out get it back (their clocks start
        that much later and their deadlines move as far)."""
        began = time.monotonic()
        try:
            yield
        finally:
            self._give_back(time.monotonic() - began)

    @contextmanager
    def _paused(self, dying: BotSession) -> Iterator[None]:
        """``_stopped_clocks`` while ``dying`` is killed or its exit awaited, with every other bot
        frozen through it: the time is nobody's, so nobody thinks in it either. Otherwise a bot
        that makes the arena wait (``bots/hostile/clockstop``: 0.5 s to tell a crash from a
        disconnect) would hand its teammate, thinking in another match, that time for free."""
        self._freeze_idle()
        with self._stopped_clocks():
            thinking = self._freeze_thinking(spare=dying)
            try:
                yield
            finally:
                for session in thinking:
                    session.resume()

    def _freeze_thinking(self, spare: BotSession | None = None) -> list[BotSession]:
        """Freeze every bot but ``spare`` that may be thinking: thawed for answers it owes, or
        asked again in this round (its request still queued: ``_freeze_idle`` leaves it thawed, as
        the flush would thaw it again at once; ``bots/hostile/keepmove`` thinks there); those.
        ``resume`` thaws only the first kind: the flush thaws the others as their requests go."""
        thinking = [session for session in self.sessions
                    if session is not spare and (session.thinking or (session.alive and self.owed.get(id(session))))]
        for session in thinking:
            session.pause()
        return thinking

    @contextmanager
    def _feed_steps(self) -> Iterator[None]:
        """Around the feed's calls in ``_admit``, with the clocks stopped: the bots that its slow
        steps froze (``_slow_step``) are thawed once it is done."""
        self.frozen_for_feed = []
        try:
            yield
        finally:
            frozen, self.frozen_for_feed = self.frozen_for_feed or [], None
            for session in frozen:
                session.resume()

    @contextmanager
    def _slow_step(self) -> Iterator[None]:
        """What the feed starts or closes a process inside. In ``_admit``, whose clocks are stopped,
        the bots thinking are frozen from the first such step on: a start takes milliseconds, and
        nobody thinks on time that is nobody's (``bots/hostile/clockstop`` makes the arena start
        a process for it again and again)."""
        if self.frozen_for_feed == []:  # in _admit, and no step froze anyone yet
            self.frozen_for_feed = self._freeze_thinking()
        yield

    def _give_back(self, spent: float) -> None:
        """The requests out start ``spent`` seconds later, and their deadlines move as far."""
        for pending in self.pending.values():
            if pending.sent_at is not None:
                pending.sent_at += spent
                pending.deadline += spent

    def _watch(self, session: BotSession) -> None:
        self.sessions.append(session)
        self.poller.register(session.monitor, zmq.POLLIN)
        self.by_socket[session.socket] = (session, False)
        self.by_socket[session.monitor] = (session, True)
        if session.starting:  # its hello is read on its link
            self.starting.append(session)
            self.poller.register(session.socket, zmq.POLLIN)

    def _forget(self, session: BotSession) -> None:
        """Stop polling a session no game in play uses (the feed may close it next)."""
        self.sessions.remove(session)
        self.poller.unregister(session.monitor)
        if session in self.starting:
            self.starting.remove(session)
            self.poller.unregister(session.socket)
        elif self.owed.pop(id(session), 0):
            self.poller.unregister(session.socket)
        for key in [k for k in self.pending if k[0] == id(session)]:
            del self.pending[key]
        del self.by_socket[session.socket], self.by_socket[session.monitor]

    # ------------------------------------------------------------------ greeting

    def _shake(self, session: BotSession, now: float) -> bool:
        """A step of a starting session's handshake; once it ends (welcomed or dead), the games
        it seats whose seats are all greeted send their first request. True if the bot died in
        it: it was killed ``_paused`` (the clocks of the requests out stopped, and the bots
        thinking frozen, through the kill)."""
        if session.shake(now, around_kill=functools.partial(self._paused, session)):
            return False
        killed = not session.alive
        self.starting.remove(session)
        self.poller.unregister(session.socket)  # polled again while it owes an answer
        self.greeted = True
        for game in list(self.playing):
            if game.seating and session in game.sessions and not any(s.starting for s in game.sessions):
                game.seating = False
                self._dispatch(game)
        return killed

    # ------------------------------------------------------------------ owing

    def _owe(self, session: BotSession, key: tuple[int, int], pending: _Pending) -> None:
        """A request to ``session`` is out: its link is polled until it owes nothing."""
        self.pending[key] = pending
        owed = self.owed.get(id(session), 0)
        if owed == 0:
            self.poller.register(session.socket, zmq.POLLIN)
        self.owed[id(session)] = owed + 1

    def _settle(self, session: BotSession, key: tuple[int, int]) -> _Pending:
        """The request ``key`` is answered or faulted; a link that owes nothing is not polled."""
        pending = self.pending.pop(key)
        pending.settled = True
        owed = self.owed[id(session)] - 1
        self.owed[id(session)] = owed
        if owed == 0:
            self.poller.unregister(session.socket)
        return pending

    # ------------------------------------------------------------------ sending

    def _dispatch(self, game: _Game) -> None:
        """Send the game's next request, or finish it (once its seats are greeted)."""
        if game.seating:
            return
        if game.notices:
            self._deliver(game)
        decision = game.referee.decision()
        if decision is None:
            game.done = True
            self.playing.remove(game)
            self.ended.append(game)
            return
        session = game.sessions[decision.seat]
        if not session.alive:
            game.notices += game.referee.fault(self._charge(session, decision.seat, game))
            self._dispatch(game)
            return
        seq = session.next_seq()
        payload = make_request(seq, decision.match_id, decision.seat, decision.view, decision.legal_actions,
                               decision.time_limit_ms, decision.bank_ms)
        pending = _Pending(game, decision.seat, decision.budget_s, payload)
        self._owe(session, (id(session), seq), pending)
        self.outbox.append((session, payload, pending))
        game.waiting = True

    def _flush(self) -> None:
        """Send what the round queued, in order: its requests leave together (the bots read them
        in one wakeup, and the link's I/O thread is woken once, not per message). Each request's
        clock starts once its bot is thawed, just before it is sent: a bot is never charged for
        a thaw, its own or another's, while it is frozen. A link that cannot take a message is
        lost (its requests fault)."""
        while self.outbox:
            outbox, self.outbox = self.outbox, []
            lost: list[BotSession] = []
            for session, payload, pending in outbox:
                if pending is not None:
                    if pending.settled:  # faulted while queued (e.g. its link sent garbage): never sent
                        continue
                    pending.cpu_ns = session.begin_request(self.round)
                    now = time.monotonic()
                    pending.sent_at, pending.deadline = now, now + pending.budget_s
                if session.alive and session not in lost and not session.send(payload):
                    lost.append(session)
            for session in lost:  # after the batch: what a loss queues goes after what was queued before it
                if session.alive:
                    self._lost(session)

    def _deliver(self, game: _Game) -> None:
        match_id = game.referee.match_id
        for notice in game.notices:
            session = game.sessions[notice.seat]
            if not session.alive:
                continue
            if notice.kind == "hand_over":
                assert notice.view is not None
                payload = make_hand_over(match_id, notice.seat, notice.view, notice.score, notice.carry)
            else:
                payload = make_match_over(match_id, notice.seat, notice.score, notice.winner, hands=notice.hands,
                                          forfeit=notice.forfeit,
                                          fault=None if notice.fault is None else notice.fault.to_wire())
            self.outbox.append((session, payload, None))
        game.notices.clear()

    # ------------------------------------------------------------------ receiving

    def _on_message(self, session: BotSession, raw: bytes, now: float) -> bool:
        """Handle one message of a ready session; True if it broke the protocol and was killed
        (the clocks of the requests out stopped meanwhile: a kill takes milliseconds, and the
        bots thinking in other games must not pay for it)."""
        try:
            reply = parse_reply(raw)
        except ProtocolError as exc:
            kind = FaultKind(exc.code)
            if kind not in (FaultKind.PROTOCOL, FaultKind.DISCONNECT):
                self._fault_pending(session, kind, f"unreadable reply: {exc}", raw, now)
                return False
            with self._paused(session):
                death = session.fail(kind, str(exc), reply=raw)
            self._lose(session, death)
            return True
        key = (id(session), reply.seq)
        pending = self.pending.get(key)
        if pending is None or pending.sent_at is None or pending.game.referee.match_id != reply.game_id:
            session.dropped_replies += 1
            log.info("dropped a reply from %s with seq %s (never issued or stale)", session.name, reply.seq)
            return False
        self._settle(session, key)
        game = pending.game
        game.waiting = False
        cpu_ns = session.end_request(self.round)
        self.answered.append(session)
        cpu_s = None if cpu_ns is None or pending.cpu_ns is None else (cpu_ns - pending.cpu_ns) / 1e9
        game.notices += game.referee.answer(reply.action, now - pending.sent_at, raw, cpu_s=cpu_s,
                                            request=pending.request, stderr_tail=session.stderr_tail)
        self._dispatch(game)
        return False

    def _fault_pending(self, session: BotSession, kind: FaultKind, detail: str, raw: bytes | None,
                       now: float) -> None:
        """A fault on a live link: charged to every request outstanding on it."""
        for key in [k for k in self.pending if k[0] == id(session)]:
            self._fault_request(key, session, kind, detail, now, raw)

    def _lost(self, session: BotSession) -> None:
        """The link reset or the process ended: a crash or a disconnect (``classify_loss`` waits
        a moment for the exit, so what the round queued is sent and the bots that answered are
        frozen first)."""
        self._flush()
        if not session.alive:  # the flush found it lost already
            return
        with self._paused(session):
            death = session.classify_loss()
        self._lose(session, death)

    def _lose(self, session: BotSession, death: Fault) -> None:
        """The session is dead: every unfinished game it plays in gets the fault."""
        owed: dict[int, _Pending] = {}  # id(game) -> the request the dead bot owed in it
        for key in [k for k in self.pending if k[0] == id(session)]:
            pending = self._settle(session, key)
            pending.game.waiting = False
            owed[id(pending.game)] = pending
        now = time.monotonic()
        for game in list(self.playing):
            if game.done or session not in game.sessions:
                continue
            seat = game.sessions.index(session)
            if game.waiting:
                continue  # the other seat is thinking; the fault lands when this seat is asked
            fault = self._charge(session, seat, game, death, owed.get(id(game)), now)
            game.notices += game.referee.fault(fault)
            self._dispatch(game)

    def _charge(self, session: BotSession, seat: int, game: _Game, death: Fault | None = None,
                pending: _Pending | None = None, now: float = 0.0) -> Fault:
        """The session's death as a fault of ``seat`` in ``game`` (with the request it owed)."""
        base = death or session.death or Fault(FaultKind.CRASH, None, session.name, "bot process is gone")
        return game.referee.fault_record(
            base.kind, seat, base.detail, request=pending.request if pending else None, reply=base.reply,
            elapsed_s=pending.elapsed(now) if pending else None, dropped_replies=session.dropped_replies,
            exit=base.exit, stderr_tail=base.stderr_tail,
        )

    # ------------------------------------------------------------------ clocks

    def _next_wait(self) -> float:
        now = time.monotonic()
        nearest = min((p.deadline for p in self.pending.values()), default=now + _LIVENESS_S)
        if self.starting:
            nearest = min(nearest, min(s.handshake.deadline for s in self.starting))
        return max(0.0, min(nearest - now, _LIVENESS_S))

    def _expire(self, now: float) -> None:
        if self.starting:
            for session in [s for s in self.starting if now >= s.handshake.deadline]:
                self._shake(session, now)  # its hello may still be waiting: read before the deadline is enforced
        for key, pending in list(self.pending.items()):
            if pending.deadline > now or key not in self.pending:
                continue
            session = pending.game.sessions[pending.seat]
            detail = "no answer within the limit plus the bank"
            if session.dropped_replies:
                detail += f" ({session.dropped_replies} stray replies dropped)"
            self._fault_request(key, session, FaultKind.TIMEOUT, detail, now)

    def _fault_request(self, key: tuple[int, int], session: BotSession, kind: FaultKind, detail: str,
                       now: float, raw: bytes | None = None) -> None:
        """Charge ``kind`` to the seat that owes the answer to the request ``key``."""
        pending = self._settle(session, key)
        if pending.sent_at is not None:  # it was thawed for it
            session.end_request(self.round)
        session.freeze_if_idle()  # at once: a bot that timed out may well be computing still
        game = pending.game
        game.waiting = False
        fault = game.referee.fault_record(
            kind, pending.seat, detail, request=pending.request, reply=raw, elapsed_s=pending.elapsed(now),
            dropped_replies=session.dropped_replies, stderr_tail=session.stderr_tail(),
        )
        game.notices += game.referee.fault(fault)
        self._dispatch(game)

    def _check_liveness(self, now: float) -> None:
        for session in list(self.starting):  # a bot that exits without a word wakes no socket
            self._shake(session, now)
        for session in self.sessions:
            if session.alive and session.exited():
                self._lost(session)
