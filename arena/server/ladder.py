"""The ladder: duplicate pairs among the active bots, without end, stored like ``arena run`` stores them.

A thread of the server process schedules pairs and hands them to an executor of worker
processes that play them with the runner's own ``play_pair`` (sandboxed bots, the referee,
void matches replayed). The ladder's results live in a ``results.store`` file
(``DIR/ladder/arena.sqlite``), one tournament that grows: each accepted submission becomes an
entrant (``bot@version``), and each pair is stored *before* it is played (index, entrants,
seed) and committed with both halves in one transaction when it is done. So after a kill -9
the pairs in flight are played again from the same seeds and nothing is counted twice.

The active bots are, at every turn, each bot's newest accepted version unless the organiser
disabled it (``ServerDB.active_versions``): a new version replaces the old one in play at
once (the old keeps its history), a late entrant joins without a restart, and a disabled bot
gets no new pairs. ``pairing.next_pairing`` picks what to play. Deals are secret, as in a
tournament (``arena.engine.deals``): the key lives in the ladder's store, so no participant can
predict a deal.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import os
import select
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.botproc import SandboxMode, fingerprint
from arena.clock import TimeControl
from arena.engine import Rules
from arena.engine.records import EntrantRecord, PairOutcome, TournamentSettings
from arena.faults import FaultPolicy
from arena.matchplay import MatchSettings
from arena.runner import PairTask, play_pair, shutdown_executor, worker_init
from arena.schedule import new_key
from arena.server import settle
from arena.server.config import ServerConfig
from arena.server.db import ServerDB
from arena.server.pairing import Pairing, next_pairing
from arena.server.standings import LADDER_DIR, LADDER_NAME, build_board, label_of, ladder_path
from results.store import Store

log = logging.getLogger(__name__)

LOGS = "logs"
MAX_PAIR_ATTEMPTS = 3
RETRY_S = 5.0  # after an error in the ladder loop, how long until it starts again
RATING_SHARE = 0.1  # the most of the ladder thread's time that rating the bots (a pairing hint) may take

ExecutorFactory = Callable[[], cf.Executor]


def local_pool(workers: int) -> cf.Executor:
    """Worker processes started by a fork server: forked from a clean single-threaded process,
    never from the multi-threaded web server. Each ends itself when the server process dies, and
    takes a slot of its own (the cores of its lock-step bots, as ``runner.local_executor``'s do)."""
    context = multiprocessing.get_context("forkserver")
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                  initializer=_ladder_worker_init, initargs=(os.getpid(), context.Value("i", 0)))


def _ladder_worker_init(server_pid: int, slots: Any) -> None:
    """``worker_init``, plus a watch on the server: a fork server's child is not the server's, so
    the parent-death signal alone would tie it to the fork server, which in turn lives as long
    as its children (they hold its liveness pipe). A killed server must take its workers, and
    so their sandboxed bots, with it."""
    worker_init(slots=slots)
    try:
        watched = os.pidfd_open(server_pid)
    except (AttributeError, OSError):  # not Linux 5.3+: poll instead
        watched = None
    threading.Thread(target=_exit_with, args=(server_pid, watched), name="server-watch", daemon=True).start()


def _exit_with(server_pid: int, pidfd: int | None) -> None:
    """Block until the server process is gone, then end this worker at once."""
    if pidfd is not None:
        watch = select.poll()  # not select(): no ceiling on the descriptor's number
        watch.register(pidfd, select.POLLIN)
        watch.poll()
    else:
        while True:
            try:
                os.kill(server_pid, 0)
            except ProcessLookupError:
                break
            time.sleep(1.0)
    os._exit(1)


def match_settings(config: ServerConfig) -> MatchSettings:
    """How every ladder match is played."""
    return MatchSettings(
        rules=Rules.profile(config.profile),
        time_control=TimeControl(time_limit_ms=config.time_limit_ms, bank_ms=config.bank_ms,
                                 handshake_ms=config.handshake_ms),
        policy=FaultPolicy.STRICT, sandbox=SandboxMode(config.sandbox))


def open_ladder(folder: Path) -> tuple[Store, int]:
    """The ladder's store and tournament id (both made on first use)."""
    path = ladder_path(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    store = Store(path, create=True)
    if not store.has_tournament():
        store.create_tournament(LADDER_NAME, 0, TournamentSettings.from_dict({"ladder": True}), [], [], deal_key=new_key())
    return store, store.tournament().id


@dataclass(frozen=True, slots=True)
class Entrant:
    """An active bot version as the ladder plays it."""

    number: int
    label: str
    bot_dir: str


class Ladder(threading.Thread):
    """The thread that keeps ``workers`` pairs in flight among the active bots while not paused."""

    def __init__(self, folder: Path, workers: int, executor_factory: ExecutorFactory | None = None) -> None:
        super().__init__(name="ladder", daemon=True)
        self.folder = Path(folder)
        self.workers = workers
        self.factory = executor_factory or (lambda: local_pool(workers))
        self.wake = threading.Event()
        self.stopping = threading.Event()

    def stop(self) -> None:
        """End the loop; pairs in flight are discarded (a restart plays them again)."""
        self.stopping.set()
        self.wake.set()

    def run(self) -> None:
        while not self.stopping.is_set():
            db = ServerDB(self.folder)
            store, tid = open_ladder(self.folder)
            try:
                _Loop(self, db, store, tid).run()
            except Exception:  # the ladder must run itself: start over from the store after a pause
                log.exception("the ladder stopped on an error; it starts again in %.0f s", RETRY_S)
                self.stopping.wait(RETRY_S)
            finally:
                store.close()
                db.close()


class _Loop:
    """One run of the ladder thread: its executor, the pairs in flight and the counts."""

    def __init__(self, ladder: Ladder, db: ServerDB, store: Store, tid: int) -> None:
        self.ladder = ladder
        self.db = db
        self.store = store
        self.tid = tid
        self.deals = store.deals(tid)
        self.settings = match_settings(db.config())
        self.run_dir = str(ladder.folder / LADDER_DIR / LOGS)
        self.in_flight: dict[cf.Future[PairOutcome], PairTask] = {}
        self.attempts: Counter[int] = Counter()
        self.played: Counter[Pairing] = Counter()
        self.sigma: dict[int, float] = {}
        self.pace = RatingPace()
        self.pending: deque[int] = deque()  # pair indices stored but not finished: played first
        self.entrants: dict[str, Entrant] = {}  # by label

    def run(self) -> None:
        for stored in self.store.pairs(self.tid):
            key = _key(stored.pair.a, stored.pair.b)
            if stored.finished_at is not None:
                self.played[key] += 1
            else:
                self.pending.append(stored.pair.index)
        if self.pending:
            log.info("ladder: %d pair(s) were in flight when the server stopped; they are played again",
                     len(self.pending))
        self._rate()
        executor = self.ladder.factory()
        try:
            while not self.ladder.stopping.is_set():
                if settle.wanted(self.db):
                    if not self.in_flight:  # the ladder's pairs in flight finish first
                        shutdown_executor(executor, discard=True)
                        self._settle()
                        executor = self.ladder.factory()
                        continue
                else:
                    active = self._sync_entrants()
                    if not self.db.get_state("paused", False):
                        self._fill(executor, active)
                if not self.in_flight:
                    self.ladder.wake.wait(0.5)
                    self.ladder.wake.clear()
                    continue
                done, _ = cf.wait(list(self.in_flight), timeout=0.5, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    if not self._collect(future):
                        executor = self._renew(executor)
                        break
        finally:
            shutdown_executor(executor, discard=True)

    def _settle(self) -> None:
        """Play the settle phase; a failure is recorded in its state and the ladder goes on."""
        try:
            settle.play_settle(self.ladder.folder, self.db, self.ladder.factory, self.ladder.workers)
        except Exception as exc:
            log.exception("the settle phase failed")
            state = self.db.get_state(settle.SETTLE_STATE)
            state.update(status="failed", error=str(exc))
            self.db.set_state(settle.SETTLE_STATE, state, actor="server", what=f"settle phase failed: {exc}")

    def _sync_entrants(self) -> dict[int, Entrant]:
        """Every active version as an entrant of the ladder tournament (added on first sight)."""
        active = {}
        for sub in self.db.active_versions():
            label = label_of(sub.bot, sub.version)
            entrant = self.entrants.get(label)
            if entrant is None:
                bot_dir = (self.ladder.folder / sub.bot_path).absolute()
                number = self.store.add_entrant(self.tid, EntrantRecord(
                    name=sub.bot, version=str(sub.version), fingerprint=fingerprint(bot_dir), path=str(bot_dir),
                    label=label))
                entrant = self.entrants[label] = Entrant(number, label, str(bot_dir))
                log.info("ladder: %s is in play as entrant %d", label, number)
            active[entrant.number] = entrant
        return active

    def _fill(self, executor: cf.Executor, active: dict[int, Entrant]) -> None:
        while len(self.in_flight) < self.ladder.workers:
            task = self._pending_task(active) or self._new_task(active)
            if task is None:
                return
            self.attempts[task.pair_index] += 1
            self.in_flight[executor.submit(play_pair, task)] = task

    def _task(self, index: int, a: Entrant, b: Entrant, seed: int) -> PairTask:
        return PairTask(index, seed, (a.bot_dir, b.bot_dir), (a.label, b.label), self.settings, self.run_dir)

    def _pending_task(self, active: dict[int, Entrant]) -> PairTask | None:
        """A stored, unfinished pair whose two entrants are still in play (others stay unplayed)."""
        while self.pending:
            (stored,) = self.store.pairs(self.tid, self.pending.popleft())
            pair = stored.pair
            if stored.finished_at is None and pair.a in active and pair.b in active:
                self.played[_key(pair.a, pair.b)] += 1
                return self._task(pair.index, active[pair.a], active[pair.b], pair.seed)
        return None

    def _new_task(self, active: dict[int, Entrant]) -> PairTask | None:
        floor = self.db.config().pair_floor
        sigma = {e: self.sigma.get(e, 25.0 / 3.0) for e in active}
        pairing = next_pairing(list(active), self.played, sigma, floor)
        if pairing is None:
            return None
        a, b = pairing
        index = self.store.add_pair(self.tid, a, b, self.deals.pair_seed)
        self.played[pairing] += 1
        return self._task(index, active[a], active[b], self.deals.pair_seed(index))

    def _collect(self, future: cf.Future[PairOutcome]) -> bool:
        """Store a finished pair; False when the worker pool broke (everything in flight is lost)."""
        task = self.in_flight.pop(future)
        a, b = self._entrants(task.pair_index)
        try:
            pair = future.result()
        except BrokenProcessPool:
            log.error("ladder: a worker died; the pairs in flight are played again")
            self._requeue([task, *self.in_flight.values()])
            self.in_flight.clear()
            return False
        except Exception as exc:  # a harness failure in the worker: never charged
            log.error("ladder: pair %d failed in the harness: %r", task.pair_index, exc)
            self._requeue([task])
            return True
        self.store.record_pair(self.tid, task.pair_index, pair.outcomes, [(a, b), (b, a)],
                               attempts=self.attempts[task.pair_index])
        self.pace.rate(self._rate)
        return True

    def _requeue(self, tasks: list[PairTask]) -> None:
        for task in tasks:
            self.played[_key(*self._entrants(task.pair_index))] -= 1
            if self.attempts[task.pair_index] < MAX_PAIR_ATTEMPTS:
                self.pending.appendleft(task.pair_index)
            else:
                log.error("ladder: pair %d failed %d times; it is left unplayed", task.pair_index, MAX_PAIR_ATTEMPTS)

    def _renew(self, executor: cf.Executor) -> cf.Executor:
        shutdown_executor(executor, discard=True)
        return self.ladder.factory()

    def _entrants(self, index: int) -> tuple[int, int]:
        (stored,) = self.store.pairs(self.tid, index)
        return stored.pair.a, stored.pair.b

    def _rate(self) -> None:
        board = build_board(self.store, self.db)
        self.sigma = {e: rating.sigma for e, rating in board.ratings.items()}


class RatingPace:
    """When the ladder rates its bots again: rating reads every stored match, so its cost grows with
    the ladder, and after every pair it would come to dominate the thread (94 ms at 3,222 pairs).
    A rating that took ``t`` seconds is next due ``t / share`` seconds later: at most ``share``
    of the thread's time, however long the ladder has run."""

    def __init__(self, share: float = RATING_SHARE, clock: Callable[[], float] = time.monotonic) -> None:
        self.share = share
        self.clock = clock
        self.due = -float("inf")

    def rate(self, rating: Callable[[], None]) -> bool:
        """Run ``rating`` if it is due; whether it ran."""
        began = self.clock()
        if began < self.due:
            return False
        rating()
        self.due = began + (self.clock() - began) / self.share
        return True


def _key(a: int, b: int) -> Pairing:
    return (a, b) if a < b else (b, a)
