"""Playing matches between bot folders: a pool of reusable sessions and ``play_match``.

Bot processes are reused across matches for speed, but a process never serves both halves
of a duplicate pair (it would know its opponent's cards from the other half): each session
remembers the pairs it served. ``fresh`` settings give every match new processes. A session
that faulted is never reused. ``play_at_once`` plays several matches through one conductor:
a bot process that was granted ``max_games > 1`` then serves several of them interleaved,
and the next match starts as soon as one ends.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Hashable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq

from arena.botproc import Limits, Manifest, SandboxMode
from arena.clock import TimeControl
from arena.conductor import play_fed, play_matches
from arena.engine import Rules
from arena.engine.records import Fault, FaultKind, MatchOutcome
from arena.faults import FaultPolicy
from arena.referee import Referee, Refereeing
from arena.session import BotSession, SlowStep, close_sessions, greet, launch_session, raise_descriptor_limit

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """How matches are played: rules, clocks, fault policy and the sandbox."""

    rules: Rules = field(default_factory=Rules)
    time_control: TimeControl = field(default_factory=TimeControl)
    policy: FaultPolicy = FaultPolicy.STRICT
    sandbox: SandboxMode = SandboxMode.AUTO
    limits: Limits = field(default_factory=Limits)
    fresh: bool = False
    max_games: int = 1  # a cap: each bot is granted the smallest of this, its bot.toml's and its hello's


def batch_scheduling() -> bool:
    """Put the calling thread, and what it starts from now on, under Linux's SCHED_BATCH.

    A woken thread then does not preempt the one that woke it, so a ZeroMQ send no longer
    hands the CPU to the I/O thread at once and messages go out in batches. The refereeing
    thread calls it before its ZeroMQ context (whose I/O thread inherits it) and its bots
    (which inherit it across fork and exec): every bot runs under the same policy. Measured
    here: about twice the multiplexed throughput, lock-step unchanged (bench/protocol.py).
    """
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        return True
    except (AttributeError, OSError):  # not Linux
        return False


class SessionPool:
    """The bot sessions of one process (a worker or the CLI); close() ends them all."""

    def __init__(self, run_dir: Path, settings: MatchSettings) -> None:
        self.run_dir = Path(run_dir)
        self.settings = settings
        batch_scheduling()
        raise_descriptor_limit()  # every connection a bot opens to its endpoint is a descriptor here
        self.ctx: zmq.Context[Any] = zmq.Context()
        self.socket_dir = Path(tempfile.mkdtemp(prefix="arena-", dir="/tmp"))
        self.idle: list[BotSession] = []  # sessions that may take games
        self.retiring: list[BotSession] = []  # sessions that take no new game, closed when they play none
        self._started = 0
        self.one_game_at_a_time = False  # lock-step: sessions launched now are pinned; find() keeps the kinds apart
        self._rules = settings.rules.to_dict()  # what every welcome carries
        self.slow_step: SlowStep = nullcontext  # what a start or close of a process runs inside (a conductor's)

    def __enter__(self) -> SessionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def find(self, manifest: Manifest, pair_key: Hashable | None = None, *, exclude: tuple[BotSession, ...] = (),
             room: bool = True) -> BotSession | None:
        """A live or starting session of ``manifest``'s bot that has not served ``pair_key``, is not
        in ``exclude`` and (with ``room``) plays fewer games than it was granted; None if there is
        none. A starting session has room for one game: its grant is known from its hello. Only a
        session launched for lock-step play (pinned to this worker's cores) serves lock-step play."""
        for session in self.idle:
            if ((session.manifest is manifest or session.manifest == manifest)  # a worker's specs share one
                    and (session.alive or session.starting) and session not in exclude
                    and session.pinned == self.one_game_at_a_time
                    and (not room or session.load < session.max_games)
                    and (pair_key is None or pair_key not in session.served_pairs)):
                return session
        return None

    def has_room(self) -> bool:
        """Whether a session that may serve the play at hand has room for another game."""
        return any(s.load < s.max_games and s.pinned == self.one_game_at_a_time for s in self.idle)

    def seat(self, manifests: tuple[Manifest, Manifest], pair_key: Hashable | None = None) -> tuple[BotSession, BotSession]:
        """Sessions for both seats of a match (seat 0 = ``manifests[0]``) that did not serve
        ``pair_key``; one never plays both. Where none has room a new process starts, and both
        a match needs start together (Python bots take a fifth of a second). A new session is
        still starting: the conductor that plays the match greets it in its poll loop."""
        first = self.take(manifests[0], pair_key)
        try:
            return first, self.take(manifests[1], pair_key, exclude=(first,))
        except BaseException:
            self.release(first, faulted=False)
            raise

    def acquire(self, manifest: Manifest, pair_key: Hashable | None = None, *,
                exclude: tuple[BotSession, ...] = ()) -> BotSession:
        """A ready session of ``manifest``'s bot that has not served ``pair_key`` and is not in
        ``exclude`` (the other seat's session: one process never plays both seats of a match);
        a new one, greeted before it is returned, if none has room."""
        session = self.take(manifest, pair_key, exclude=exclude)
        greet([session])
        return session

    def take(self, manifest: Manifest, pair_key: Hashable | None = None, *,
             exclude: tuple[BotSession, ...] = ()) -> BotSession:
        """``acquire`` without the handshake: a new session is returned still starting (the
        conductor that plays its match greets it)."""
        session = self.find(manifest, pair_key, exclude=exclude)
        if session is None:
            session = self._launch(manifest)
            self.idle.append(session)
        session.load += 1
        if pair_key is not None:
            session.served_pairs.add(pair_key)
        return session

    def _launch(self, manifest: Manifest) -> BotSession:
        self._started += 1
        with self.slow_step():
            return launch_session(
                manifest, self.ctx, socket_dir=self.socket_dir, run_dir=self.run_dir,
                handshake_s=self.settings.time_control.handshake_ms / 1000.0,
                max_games=min(self.settings.max_games, manifest.max_games), rules=self._rules,
                limits=self.settings.limits, sandbox=self.settings.sandbox, index=self._started,
                pinned=self.one_game_at_a_time,
            )

    def release(self, session: BotSession, *, faulted: bool) -> None:
        """Give a session back; a faulted, dead or ``fresh`` one takes no new game and is closed
        once it plays none (a process granted several games may still be in others)."""
        session.load -= 1
        if faulted or not session.alive or self.settings.fresh:
            if session in self.idle:
                self.idle.remove(session)
                self.retiring.append(session)
        if session.load <= 0 and session in self.retiring:
            self.retiring.remove(session)
            with self.slow_step():
                session.close()

    def close(self) -> None:
        """Shut every session down, then the context and the socket folder."""
        close_sessions(self.idle + self.retiring)
        self.idle.clear()
        self.retiring.clear()
        self.ctx.term()
        shutil.rmtree(self.socket_dir, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """One match to play: seat 0 = ``manifests[0]``; ``pair_key`` names its duplicate pair."""

    manifests: tuple[Manifest, Manifest]
    match_id: str
    seed: int | str
    pair_key: Hashable | None = None
    names: tuple[str, str] | None = None


def play_spec(pool: SessionPool, spec: MatchSpec, *, attempts: int = 1) -> MatchOutcome:
    """Play ``spec`` alone, replaying it from its seed while it is void, at most ``attempts`` times."""
    outcome = play_match(pool, spec.manifests, spec.match_id, spec.seed, pair_key=spec.pair_key, names=spec.names)
    return _replay_void(pool, spec, outcome, attempts)


def play_at_once(pool: SessionPool, specs: list[MatchSpec], *, attempts: int = 1,
                 started: Callable[[MatchSpec], None] | None = None) -> list[MatchOutcome]:
    """Play every match of ``specs`` through one conductor, as many at once as the bots' processes
    take, starting the next as soon as one ends (refill); outcomes in the order given.

    Each match takes sessions from ``pool`` as ``play_match`` does, so a process that was
    granted ``max_games > 1`` serves up to that many matches interleaved, but never both seats
    of one match nor two matches of one pair. A match waits for room on the running processes;
    a new process is started only when none could ever seat it (or nothing is in play).
    ``started`` hears of each match as it is seated. A void match is then replayed alone from
    its seed, up to ``attempts`` plays in all.
    """
    feed = _Refill(pool, specs, started)
    try:
        play_fed(feed)
    finally:
        pool.slow_step = nullcontext
        for _, referee, sessions in feed.seated.values():  # a harness failure left them in play
            _release(pool, referee, sessions)
    return [_replay_void(pool, spec, outcome, attempts) for spec, outcome in zip(specs, feed.outcomes())]


class _Refill:
    """The conductor's feed for ``play_at_once``: specs in order, each seated once its processes have room."""

    def __init__(self, pool: SessionPool, specs: list[MatchSpec], started: Callable[[MatchSpec], None] | None) -> None:
        self.pool, self.specs, self.started = pool, specs, started
        self.waiting = list(range(len(specs)))
        self.seated: dict[int, tuple[int, Referee, tuple[BotSession, BotSession]]] = {}  # id(referee) -> in play
        self.done: dict[int, MatchOutcome] = {}  # spec -> outcome

    def admit(self, playing: int) -> list[tuple[Referee, tuple[BotSession, BotSession]]]:
        games: list[tuple[Referee, tuple[BotSession, BotSession]]] = []
        for i in list(self.waiting):
            if not self.pool.has_room() and playing + len(games) > 0:
                break  # every process is full: wait for a match to end
            sessions = self._seat(self.specs[i], alone=playing + len(games) == 0)
            if sessions is None:
                continue
            self.waiting.remove(i)
            referee = _referee(self.pool.settings, self.specs[i])
            self.seated[id(referee)] = (i, referee, sessions)
            games.append((referee, sessions))
            if self.started is not None:
                self.started(self.specs[i])
        return games

    def _seat(self, spec: MatchSpec, *, alone: bool) -> tuple[BotSession, BotSession] | None:
        """Sessions for ``spec`` with room, or None to wait for room on processes that could seat it;
        starts new processes when none could (or nothing is in play to make room)."""
        pool, (a, b), key = self.pool, spec.manifests, spec.pair_key
        first = pool.find(a, key)
        if first is None or pool.find(b, key, exclude=(first,)) is None:
            could = pool.find(a, key, room=False)
            if not alone and could is not None and pool.find(b, key, exclude=(could,), room=False) is not None:
                return None
        return pool.seat(spec.manifests, spec.pair_key)

    def ended(self, seated: tuple[Refereeing, tuple[BotSession, BotSession]], outcome: MatchOutcome) -> None:
        i, referee, sessions = self.seated.pop(id(seated[0]))
        failed, outcome = _check_logs(referee, sessions, outcome)
        _release(self.pool, referee, sessions, broken=failed)
        self.done[i] = outcome

    def set_slow_step(self, slow_step: SlowStep) -> None:
        self.pool.slow_step = slow_step

    def outcomes(self) -> list[MatchOutcome]:
        return [self.done[i] for i in range(len(self.specs))]


def _replay_void(pool: SessionPool, spec: MatchSpec, outcome: MatchOutcome, attempts: int) -> MatchOutcome:
    for attempt in range(2, attempts + 1):
        if not outcome.void:
            break
        log.warning("match %s void (attempt %d): %s", outcome.match_id, attempt - 1,
                    "; ".join(f.describe() for f in outcome.faults))
        outcome = play_match(pool, spec.manifests, spec.match_id, spec.seed, pair_key=spec.pair_key, names=spec.names)
    return outcome


def _referee(settings: MatchSettings, spec: MatchSpec) -> Referee:
    names = spec.names or (spec.manifests[0].name, spec.manifests[1].name)
    return Referee(spec.match_id, spec.seed, settings.rules, names, settings.time_control, settings.policy)


def _check_logs(referee: Referee, sessions: tuple[BotSession, BotSession],
                outcome: MatchOutcome) -> tuple[bool, MatchOutcome]:
    """Whether the arena's log copier failed under a bot (it closed the bot's pipe, so the bot's
    writes failed): then the match is void, never charged.

    A log the arena could not write (its disk full) is not such a failure: the bot wrote into a
    pipe the arena kept draining, so its play never saw it, and the match stands. Voiding it would
    hand every bot a free replay of the match it is losing: fill the volume with its own output,
    or write one line while it is full (``bots/hostile/voidloss``)."""
    broken = [error for s in sessions if s.process and (error := s.process.log_cut())]
    if not broken:
        return False, outcome
    referee.fault(Fault(FaultKind.HARNESS, None, "arena", "; ".join(broken), match_id=referee.match_id))
    return True, referee.outcome()


def _release(pool: SessionPool, referee: Referee, sessions: tuple[BotSession, BotSession], *,
             broken: bool = False) -> None:
    """Give a match's sessions back; a seat that faulted (or died), or a broken log, closes its process."""
    faulted_seats = {f.seat for f in referee.faults}
    for seat, session in enumerate(sessions):
        pool.release(session, faulted=seat in faulted_seats or not session.alive or broken)


def play_match(
    pool: SessionPool,
    manifests: tuple[Manifest, Manifest],
    match_id: str,
    seed: int | str,
    *,
    pair_key: Hashable | None = None,
    names: tuple[str, str] | None = None,
) -> MatchOutcome:
    """Play one match, seat 0 = ``manifests[0]``; sessions come from (and return to) ``pool``."""
    spec = MatchSpec(manifests, match_id, seed, pair_key, names)
    sessions = pool.seat(spec.manifests, spec.pair_key)
    referee = _referee(pool.settings, spec)
    broken = False
    try:
        outcome = play_matches([(referee, sessions)])[0]
        broken, outcome = _check_logs(referee, sessions, outcome)
    finally:
        _release(pool, referee, sessions, broken=broken)
    return outcome
