"""Playing matches between bot folders: a pool of reusable sessions and ``play_match``.

Bot processes are reused across matches for speed, but a process never serves both halves
of a duplicate pair (it would know its opponent's cards from the other half): each session
remembers the pairs it served. ``fresh`` settings give every match new processes. A session
that faulted is never reused.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq

from arena.botproc import Limits, Manifest, SandboxMode
from arena.clock import TimeControl
from arena.conductor import play_matches
from arena.engine import Rules
from arena.faults import Fault, FaultKind, FaultPolicy
from arena.referee import MatchOutcome, Referee
from arena.session import BotSession, raise_descriptor_limit, start_session

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
    max_games: int = 1


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
        self.idle: list[BotSession] = []
        self._started = 0

    def __enter__(self) -> SessionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def acquire(self, manifest: Manifest, pair_key: Any = None, *,
                exclude: tuple[BotSession, ...] = ()) -> BotSession:
        """A ready session of ``manifest``'s bot that has not served ``pair_key`` and is not in
        ``exclude`` (the other seat's session: one process never plays both seats of a match)."""
        for session in self.idle:
            if (session.manifest == manifest and session.alive and session.load < session.max_games
                    and session not in exclude
                    and (pair_key is None or pair_key not in session.served_pairs)):
                break
        else:
            self._started += 1
            session = start_session(
                manifest, self.ctx, socket_dir=self.socket_dir, run_dir=self.run_dir,
                handshake_s=self.settings.time_control.handshake_ms / 1000.0,
                max_games=self.settings.max_games, rules=self.settings.rules.to_dict(),
                limits=self.settings.limits, sandbox=self.settings.sandbox, index=self._started,
            )
            self.idle.append(session)
        session.load += 1
        if pair_key is not None:
            session.served_pairs.add(pair_key)
        return session

    def release(self, session: BotSession, *, faulted: bool) -> None:
        """Give a session back; a faulted, dead or ``fresh`` one is closed."""
        session.load -= 1
        if faulted or not session.alive or (self.settings.fresh and session.load == 0):
            if session in self.idle:
                self.idle.remove(session)
            session.close()

    def close(self) -> None:
        """Shut every session down, then the context and the socket folder."""
        for session in self.idle:
            session.close()
        self.idle.clear()
        self.ctx.term()
        shutil.rmtree(self.socket_dir, ignore_errors=True)


def play_match(
    pool: SessionPool,
    manifests: tuple[Manifest, Manifest],
    match_id: str,
    seed: Any,
    *,
    pair_key: Any = None,
    names: tuple[str, str] | None = None,
) -> MatchOutcome:
    """Play one match, seat 0 = ``manifests[0]``; sessions come from (and return to) ``pool``."""
    settings = pool.settings
    first = pool.acquire(manifests[0], pair_key)
    sessions = (first, pool.acquire(manifests[1], pair_key, exclude=(first,)))
    names = names or (manifests[0].name, manifests[1].name)
    referee = Referee(match_id, seed, settings.rules, names, settings.time_control, settings.policy)
    broken: list[str] = []
    try:
        outcome = play_matches([(referee, sessions)])[0]
        broken = [error for s in sessions if s.process and (error := s.process.log_error())]
        if broken:  # the arena's own disk failed under the bots' logs: void, never charged
            referee.fault(Fault(FaultKind.HARNESS, None, "arena", "; ".join(broken), match_id=match_id))
            outcome = referee.outcome()
    finally:
        faulted_seats = {f.seat for f in referee.faults}
        for seat, session in enumerate(sessions):
            pool.release(session, faulted=seat in faulted_seats or not session.alive or bool(broken))
    return outcome
