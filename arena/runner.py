"""The tournament runner: pairs in parallel on a ``concurrent.futures.Executor``, results to a sink.

The parent owns the results (``arena.sink.Results``: the store, the one writer, and the
ratings; the CLI hands the runner ``results.recording``'s); workers play whole pairs and
return ``PairOutcome`` records. Locally the executor is a fork ``ProcessPoolExecutor`` made
once, before any ZeroMQ context exists in this process; with ``--cluster`` it is a Dask
client's executor. A pair is committed in one transaction with the rating snapshots it unlocks, so a
run stopped at any moment (Ctrl-C, kill -9, power loss) resumes with nothing lost and
nothing counted twice.
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import dataclasses
import logging
import multiprocessing
import multiprocessing.connection
import multiprocessing.process
import multiprocessing.util
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from arena.botproc import (Limits, Manifest, ManifestError, SandboxMode, cgroups, fingerprint, load_manifest,
                           resolve_mode)
from arena.botproc.cores import pin_to_slot, take_slot
from arena.botproc.fingerprint import runtime_changes, runtime_files
from arena.botproc.logsink import reserve_for_results
from arena.engine.deals import DealMode, Deals
from arena.engine.records import ChangedBot, EntrantRecord, Fault, FaultKind, MatchOutcome, Pair, PairOutcome, match_id
from arena.logsetup import renew_forwarding
from arena.matchplay import MatchSettings, MatchSpec, SessionPool, play_at_once, play_spec
from arena.multiplex import games_at_once, pairs_in_flight, submit_pairs, task_manifests
from arena.output import BOT_LOGS, MIB, forget_held_locks, free_space, space_needed
from arena.progress import progress_bar
from arena.schedule import new_key, schedule
from arena.sink import Results, StoredTournament, disk_full
from arena.tournament import ConfigError, TournamentConfig

log = logging.getLogger(__name__)
_P = ParamSpec("_P")
_T = TypeVar("_T")

MAX_MATCH_ATTEMPTS = 3  # a void (harness-faulted) match is replayed from its seed at most this often
MAX_PAIR_ATTEMPTS = 3  # a pair whose own worker failed or died is played at most this often
MAX_UNATTRIBUTED = 10  # re-queues after worker deaths that could not be pinned on one pair


@dataclass(frozen=True, slots=True)
class PairTask:
    """What a worker needs to play one pair: picklable, with no open resources."""

    pair_index: int
    seed: int
    bot_dirs: tuple[str, str]
    labels: tuple[str, str]
    settings: MatchSettings
    run_dir: str
    fingerprints: tuple[str, ...] = ()  # the bots' when the tournament started, checked before and after
    alone: bool = False  # played as a batch of its own, lock-step: its worker died under a batch of several


@dataclass(slots=True)
class RunReport:
    """What a run did."""

    output: Path
    pairs_total: int
    pairs_done_before: int
    pairs_played: int = 0
    interrupted: bool = False
    stopped: bool = False  # the stopping rule decided before the schedule's end
    seconds: float = 0.0
    faults: int = 0
    already_finished: bool = False
    stopped_for: str | None = None  # why the run stopped early by itself (a disk running full)
    withdrawn: dict[str, str] = field(default_factory=dict)  # label -> why its pairs are refused

    @property
    def finished(self) -> bool:
        """Whether the tournament is over: every pair stored, or its stopping rule decided."""
        return self.complete or self.stopped

    @property
    def complete(self) -> bool:
        """Whether every pair of the schedule is stored."""
        return self.pairs_done_before + self.pairs_played == self.pairs_total


@dataclass(frozen=True, slots=True)
class Entrants:
    """The bots of a tournament as they are now: manifests, distinct labels and fingerprints."""

    manifests: tuple[Manifest, ...]
    labels: tuple[str, ...]
    fingerprints: tuple[str, ...]


# ---------------------------------------------------------------------- workers

_local = threading.local()
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
# In a local worker: the parent's table of which worker plays which pair (pair index -> pid).
_playing: Any = None


def worker_init(playing: Any = None, slots: Any = None, parent: int | None = None) -> None:
    """In a local worker: die with ``parent`` (the pid of the process that made the pool; default:
    this process's parent now), ignore Ctrl-C (the parent handles it), report in ``playing`` (a
    shared array) which pair this process plays, and take the next slot of ``slots`` (a shared
    counter): the core it runs on, and its lock-step bots' cores (``arena.botproc.cores``)."""
    global _playing
    _die_with_parent(os.getppid() if parent is None else parent)  # first: nothing before it may outlive a kill
    _playing = playing
    if slots is not None:
        with slots.get_lock():
            take_slot(slots.value)
            slots.value += 1
        pin_to_slot()
    forget_held_locks()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's stop-flag handler is inherited by fork


def _die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when its parent dies (Linux), and exit at once if that
    parent is not ``parent``: it died before this process could ask. A worker whose parent was
    killed while it started (read its parent after the death and it reads init's) would wait
    forever on its own task queue."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: rely on the broken pipe instead
        return
    if os.getppid() != parent:
        os._exit(1)


def become_subreaper() -> bool:
    """Adopt this process's orphaned descendants (Linux); True if it worked.

    A sandbox started in the last moments of a worker that is then killed can miss
    bubblewrap's parent-death signal; as a subreaper the runner inherits such orphans and
    ``reap_strays`` ends them.
    """
    try:
        return bool(ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1) == 0)
    except (OSError, AttributeError):
        return False


def worker_pids(executor: cf.Executor) -> set[int]:
    """The pids of a local executor's worker processes (empty for other executors)."""
    return set(getattr(executor, "_processes", None) or {})


def reap_strays(workers: set[int]) -> int:
    """Reap dead children and kill live ones that are not in ``workers``; count the kills.

    ``workers`` must hold every pool worker ever started: multiprocessing reaps its own
    processes, and one reaped behind its back looks alive to it forever (its shutdown then
    spins).
    """
    killed = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            children = [int(pid) for pid in (task / "children").read_text().split()]
        except OSError:
            continue
        for pid in children:
            if pid in workers:
                continue
            try:
                if _state(pid) != "Z":
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                continue
    if killed:
        log.warning("ended %d orphaned processes left by a dead worker: %s", len(killed), killed)
    return len(killed)


def _state(pid: int) -> str:
    """The process state letter from /proc (``Z`` for a zombie), ``?`` if it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"


def _session_pool(settings: MatchSettings, run_dir: str) -> SessionPool:
    """This worker thread's session pool (made on first use, after the fork)."""
    pool: SessionPool | None = getattr(_local, "pool", None)
    if pool is None or pool.settings != settings or str(pool.run_dir) != run_dir:
        if pool is not None:
            pool.close()
        pool = _local.pool = SessionPool(Path(run_dir), settings)
        # A local worker ends its bots politely when the pool shuts it down: before its log
        # queue's own close at exit (priority 10), or what the closing logs would be lost.
        multiprocessing.util.Finalize(pool, pool.close, exitpriority=20)
    return pool


def _specs(task: PairTask) -> list[MatchSpec]:
    """The pair's two halves: the same deals, seats swapped."""
    manifests = task_manifests(task)
    return [MatchSpec((manifests[order[0]], manifests[order[1]]), match_id(task.pair_index, half), task.seed,
                      pair_key=task.pair_index, names=(task.labels[order[0]], task.labels[order[1]]))
            for half, order in enumerate(((0, 1), (1, 0)))]


def current_fingerprint(bot_dir: str) -> str:
    """The bot folder's fingerprint, hashed again only when a file's stat changed since the last call."""
    signature = []
    for dirpath, dirnames, filenames in os.walk(bot_dir):
        for name in sorted(dirnames + filenames):
            st = os.lstat(os.path.join(dirpath, name))
            signature.append((dirpath, name, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    cache: dict[str, tuple[list[tuple[Any, ...]], str]] = _local.__dict__.setdefault("prints", {})
    known = cache.get(bot_dir)
    if known is None or known[0] != signature:
        known = cache[bot_dir] = (signature, fingerprint(bot_dir))
    return known[1]


def _changed_bots(task: PairTask, now_of: dict[str, str]) -> tuple[ChangedBot, ...]:
    """The pair's bots whose folders differ from the given fingerprints, with their fingerprints
    now; ``now_of`` keeps each folder's, read once for the pairs of a batch checked together."""
    changed = []
    for slot, (bot_dir, expected) in enumerate(zip(task.bot_dirs, task.fingerprints)):
        now = now_of.get(bot_dir)
        if now is None:
            try:
                now = current_fingerprint(bot_dir)
            except (OSError, ManifestError):
                now = "missing"
            now_of[bot_dir] = now
        if now != expected:
            changed.append(ChangedBot(slot, now))
    return tuple(changed)


def play_pair(task: PairTask) -> PairOutcome:
    """Play both halves of a pair, one after the other (run in a worker)."""
    return play_pairs([task])[0]


def play_pairs(tasks: list[PairTask]) -> list[PairOutcome]:
    """Play every half of several pairs, multiplexed on the bots' processes (run in a worker):
    a pair's match starts as soon as a process has room (``matchplay.play_at_once``).

    A pair whose bot folder differs from its stored fingerprint before or after it is played
    is not played, or its results are dropped: its outcome then names the changed bots only.
    """
    results: dict[int, PairOutcome] = {}
    playable = []
    before: dict[str, str] = {}  # each bot folder's fingerprint, read once per batch before and once after
    for task in tasks:
        changed = _changed_bots(task, before)
        if changed:
            results[task.pair_index] = PairOutcome(task.pair_index, changed=changed)
        else:
            playable.append(task)
    if playable:
        pool = _session_pool(playable[0].settings, playable[0].run_dir)
        pool.one_game_at_a_time = all(games_at_once(task) == 1 for task in playable)
        specs = [spec for task in playable for spec in _specs(task)]
        if len(specs) == 2:
            _report_playing(specs[0])
            outcomes = [play_spec(pool, spec, attempts=MAX_MATCH_ATTEMPTS) for spec in specs]
        else:
            outcomes = play_at_once(pool, specs, attempts=MAX_MATCH_ATTEMPTS, started=_report_playing)
        after: dict[str, str] = {}
        for i, task in enumerate(playable):
            changed = _changed_bots(task, after)  # edited while it played: which version played is unknown
            results[task.pair_index] = PairOutcome(task.pair_index, changed=changed) if changed else PairOutcome(
                task.pair_index, tuple(outcomes[2 * i:2 * i + 2]))
    return [results[task.pair_index] for task in tasks]


def _report_playing(spec: MatchSpec) -> None:
    """Tell the parent (a local pool) that this worker plays ``spec``'s pair: its death charges the pair."""
    if _playing is not None:
        _playing[spec.pair_key] = os.getpid()


def _void_pair(task: PairTask, detail: str) -> PairOutcome:
    """A pair that could not be played, as it is stored: harness faults only, never rated."""
    outcomes = []
    for half in (0, 1):
        fault = Fault(FaultKind.HARNESS, None, "arena", detail, match_id=match_id(task.pair_index, half))
        outcomes.append(MatchOutcome(
            match_id=fault.match_id, seed=task.seed, names=task.labels, rules=task.settings.rules,
            winner=None, score=(0, 0), forfeit=False, void=True, faults=(fault,),
        ))
    return PairOutcome(task.pair_index, tuple(outcomes))


# ---------------------------------------------------------------------- executors


def local_executor(workers: int, playing: Any = None) -> cf.Executor:
    """A fork process pool: made once, before this process opens any ZeroMQ context.

    ``playing``: a shared array the workers fill with the pid that plays each pair. Each worker
    takes a slot of its own, 0 to ``workers - 1`` (the pool starts no more processes than that).
    """
    context = multiprocessing.get_context("fork")
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                  initializer=worker_init, initargs=(playing, context.Value("i", 0), os.getpid()))


def cluster_executor(address: str) -> cf.Executor:
    """A Dask distributed cluster's executor (needs the ``cluster`` extra)."""
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError("cluster mode needs Dask: pip install 'sixty-six-arena[cluster]'") from None
    return ClusterExecutor(Client(address, timeout="10s"))


class ClusterExecutor(cf.Executor):
    """A Dask client's executor that closes the client when it is shut down (and takes, as every
    executor here does, ``cancel_futures``: Dask's has no such argument)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.executor: cf.Executor = client.get_executor()

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> cf.Future[_T]:
        """Run ``fn(*args, **kwargs)`` on the cluster."""
        return self.executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking work, then close the client."""
        try:
            self.executor.shutdown(wait=wait)
        finally:
            self.client.close()


def shutdown_executor(executor: cf.Executor, *, discard: bool) -> None:
    """Stop the executor; ``discard`` also kills local workers still playing (their bots die with
    them) and does not wait for them.

    Otherwise waits for the local workers to exit, but not for ever: a worker killed while it
    waited for work can die holding the pool's queue lock, and the others then never read the
    word to stop. Once one worker has died that way, or ``WORKER_EXIT_GRACE`` has passed, the
    rest are killed.
    """
    processes = list((getattr(executor, "_processes", None) or {}).values())  # None once shut down
    manager: threading.Thread | None = getattr(executor, "_executor_manager_thread", None)
    if discard:
        for process in processes:
            process.kill()
    if discard or manager is None:
        executor.shutdown(wait=not discard, cancel_futures=True)
        return
    executor.shutdown(wait=False, cancel_futures=True)
    _end_workers(processes)
    manager.join()


WORKER_EXIT_GRACE = 30.0  # seconds a local worker has to close its bots and exit once the pool stops


def _end_workers(processes: list[multiprocessing.process.BaseProcess]) -> None:
    """Wait until every worker has exited; kill them all once one has died or the grace is over."""
    grace = WORKER_EXIT_GRACE
    deadline = time.monotonic() + grace
    alive = list(processes)
    while alive:
        if not multiprocessing.connection.wait([p.sentinel for p in alive], max(0.0, deadline - time.monotonic())):
            log.warning("workers %s had not exited %.0f s after the pool stopped; killing them",
                        [p.pid for p in alive], grace)
            break
        # Each code read once: the pool's manager thread reaps the workers too, so a second read
        # could see a code the first missed (its reap came first: ours then reads None).
        codes = {p: p.exitcode for p in alive}
        died = [p for p, code in codes.items() if code not in (None, 0)]
        alive = [p for p, code in codes.items() if code is None]
        if died and alive:
            log.warning("worker %s died (exit %s) as the pool stopped; killing workers %s, which may wait "
                        "for ever on a queue lock it held", [p.pid for p in died], [codes[p] for p in died],
                        [p.pid for p in alive])
            break
    for process in alive:
        process.kill()
        process.join()


# ---------------------------------------------------------------------- the parent


def prepare_entrants(config: TournamentConfig) -> Entrants:
    """Load every entrant's manifest, label and fingerprint; refuses before anything is written."""
    manifests = tuple(load_manifest(entry.path) for entry in config.bots)
    return Entrants(manifests, tuple(_labels(config, manifests)), tuple(fingerprint(m.bot_dir) for m in manifests))


def _labels(config: TournamentConfig, manifests: tuple[Manifest, ...]) -> list[str]:
    """Each entrant's label (its ``name`` in the file, else its manifest's name); no two alike."""
    labels: list[str] = []
    for i, (entry, manifest) in enumerate(zip(config.bots, manifests)):
        label = entry.label or manifest.name
        if label in labels:
            first = labels.index(label)
            raise ConfigError(
                f"bots[{first}] ({config.bots[first].path}) and bots[{i}] ({entry.path}) are both labelled "
                f"{label!r}; give them distinct labels (name = \"...\" in their [[bots]] tables)")
        labels.append(label)
    return labels


def open_tournament(config: TournamentConfig, entrants: Entrants,
                    results: Results) -> tuple[StoredTournament, list[Pair]]:
    """Create ``config``'s tournament in ``results``, or check that the one there is it; with its schedule."""
    n = len(entrants.labels)
    stored = results.stored()
    config = _sandbox_resolved(config)
    if stored is None:
        deals = Deals.secret(new_key()) if config.deals is DealMode.SECRET else Deals.public(config.seed)
        pairs = schedule(n, config.format, config.pairs_per_pairing, deals)
        records = [EntrantRecord(name=m.name, version=m.version, fingerprint=fp, path=str(m.bot_dir), label=label)
                   for m, fp, label in zip(entrants.manifests, entrants.fingerprints, entrants.labels)]
        stored = results.create(config.name, config.seed, config.settings(), records, pairs, deals, runtime_files())
        return stored, pairs
    _check_resume(stored, config, entrants.fingerprints)
    if not stored.finished:  # a finished one is left as it is
        _check_runtime(stored, results)
    if stored.deals.mode is not config.deals:
        raise ConfigError(f"{config.output}: the tournament's settings say {config.deals} deals, but its "
                          f"store holds {stored.deals.mode} ones; the store was changed by hand")
    return stored, schedule(n, config.format, config.pairs_per_pairing, stored.deals)


FAIR_PLAY_KEYS = ("sandbox", "disk_mb", "fresh")  # the bots' conditions: the same for every pair of a tournament


def _sandbox_resolved(config: TournamentConfig) -> TournamentConfig:
    """``config`` with the sandbox ``auto`` resolved on this machine (a local run): a tournament
    stores the sandbox its bots really had, and a continuation is compared with that (``auto``
    twice, bubblewrap once and the fallback later, would compare equal). A cluster's workers
    resolve it themselves."""
    if config.cluster is None and config.sandbox is SandboxMode.AUTO:
        return config.with_overrides(sandbox=resolve_mode(config.sandbox))
    return config


def _check_resume(stored: StoredTournament, config: TournamentConfig, prints: tuple[str, ...]) -> None:
    then = TournamentConfig.from_dict(stored.settings.document)
    mine, theirs = config.to_dict(), then.to_dict()
    if theirs["sandbox"] == "auto":  # stored unresolved, by an older arena: what it became is not known
        theirs["sandbox"] = mine["sandbox"]
    for key in (*then.schedule_key(), *FAIR_PLAY_KEYS):
        if mine[key] != theirs[key]:
            raise ConfigError(f"{config.output}: holds tournament {stored.name!r} whose {key} differs "
                              f"({theirs[key]!r} there, {mine[key]!r} now); use a new output folder or "
                              f"'arena resume {config.output}'")
    if stored.finished:  # nothing will be played: changed bots do not matter
        return
    for entrant, fp in zip(stored.entrants, prints):
        if entrant.bot.fingerprint != fp and entrant.withdrawn is None:
            raise ConfigError(
                f"bot {entrant.bot.label!r} changed since this tournament started (fingerprint "
                f"{entrant.bot.fingerprint[:12]} then, {fp[:12]} now): a changed bot is a new entrant; "
                f"start a new tournament in a new output folder")


def _check_runtime(stored: StoredTournament, results: Results) -> None:
    """Refuse to resume when the project code the bots import (the SDK) changed since the
    tournament started, naming the files; a store from before runtimes were kept records it."""
    now = runtime_files()
    if stored.runtime is None:
        log.warning("%s: no runtime fingerprint stored (an older tournament); recording the current one",
                    stored.name)
        results.record_runtime(now)
        return
    changes = runtime_changes(dict(stored.runtime), now)
    if changes:
        shown = ", ".join(changes[:6]) + (f" and {len(changes) - 6} more" if len(changes) > 6 else "")
        raise ConfigError(f"the code every bot runs besides its own folder changed since this tournament "
                          f"started ({shown}): the bots would not be the ones that played; restore those "
                          f"files, or start a new tournament in a new output folder")


class StopFlag:
    """Counts SIGINT and SIGTERM while installed: 1 = finish the pairs in flight, 2 = discard them.

    The handlers only count; the run loop reads the count between steps, so a signal never
    lands in the middle of storing a pair.
    """

    def __init__(self) -> None:
        self.count = 0

    def _handle(self, signum: int, frame: Any) -> None:
        self.count += 1

    @contextmanager
    def installed(self) -> Iterator[StopFlag]:
        """Install the handlers (main thread only; elsewhere the flag is never set by signals)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {sig: signal.signal(sig, self._handle) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class ResultSink:
    """What the runner does with a finished pair: hands it to the results (stored and rated as
    one unit), counts it in the report, and keeps track of withdrawn entrants."""

    def __init__(self, results: Results, stored: StoredTournament, report: RunReport,
                 pairs: dict[int, Pair], labels: tuple[str, ...]) -> None:
        self.results, self.report = results, report
        self.pairs, self.labels = pairs, labels
        self.withdrawn = {e: entrant.withdrawn for e, entrant in enumerate(stored.entrants)
                          if entrant.withdrawn is not None}
        report.withdrawn = {labels[e]: why for e, why in self.withdrawn.items()}

    def record(self, pair: PairOutcome, attempts: int, *, withdraw: dict[int, str] | None = None) -> None:
        """Store one played pair, and withdraw entrants with it (if it raises, nothing changed)."""
        self.results.record(pair, self.pairs[pair.pair_index], attempts, withdraw or {})
        self.report.pairs_played += 1
        self.report.faults += sum(len(o.faults) for o in pair.outcomes)
        for entrant, why in (withdraw or {}).items():
            log.error("bot %r %s", self.labels[entrant], why)
            self.withdrawn[entrant] = why
            self.report.withdrawn[self.labels[entrant]] = why

    def leader(self) -> str:
        """The label of the entrant rated best so far."""
        return self.labels[self.results.leader()]

    def refused_entrants(self, task: PairTask) -> list[int]:
        """The pair's entrants already withdrawn (changed during the run)."""
        return [e for e in self.pairs[task.pair_index].seats(0) if e in self.withdrawn]

    def refuse(self, task: PairTask, changed: tuple[ChangedBot, ...]) -> None:
        """Withdraw the pair's changed bots and store the pair void, naming them."""
        entrants = self.pairs[task.pair_index].seats(0)
        withdraw = {
            entrants[bot.slot]: (f"changed during the run (fingerprint {task.fingerprints[bot.slot][:12]} at the "
                                 f"start, {bot.fingerprint[:12]} at pair {task.pair_index}): its remaining pairs "
                                 f"are refused")
            for bot in changed if entrants[bot.slot] not in self.withdrawn
        }
        names = ", ".join(repr(self.labels[e]) for e in sorted({*withdraw, *self.refused_entrants(task)}))
        self.record(_void_pair(task, f"refused: {names} changed during the run"), 0, withdraw=withdraw)

    def refuse_withdrawn(self, task: PairTask) -> None:
        """Store a pair of an already withdrawn bot void, without playing it."""
        self.refuse(task, ())


class PairScheduler:
    """Plays the pairs still to play on an executor: submit, collect, recover from a dead worker, finish.

    A pair is charged an attempt only for its own failures: an exception from its worker, or
    the death of the worker that was playing it. Pairs re-queued because another worker died
    are replayed free; a pair that fails ``MAX_PAIR_ATTEMPTS`` times is stored void.
    """

    def __init__(self, config: TournamentConfig, sink: ResultSink, todo: deque[PairTask],
                 factory: Callable[[Any], cf.Executor], *, track_workers: bool, adopt_orphans: bool, bar: Any,
                 groups: Any) -> None:
        self.config, self.sink, self.todo, self.factory, self.bar = config, sink, todo, factory, bar
        self.groups = groups  # the run's control groups: a dead worker's bots are cleared from them
        self.adopt_orphans = adopt_orphans
        # Which worker plays which pair (local pools whose workers run worker_init with it).
        self.playing = multiprocessing.get_context("fork").Array(
            "q", sink.report.pairs_total, lock=False) if track_workers else None
        self.stop = StopFlag()
        self.in_flight: dict[cf.Future[PairOutcome], PairTask] = {}
        self.failures: dict[int, int] = {}
        self.unattributed: dict[int, int] = {}
        self.workers: set[int] = set()
        self.discard = False
        self._stops_seen = 0
        self._reserved = -1  # the results' need last told to the bots' log streams

    @property
    def stopping(self) -> bool:
        """No more pairs are submitted (Ctrl-C, SIGTERM, the disk running full, or the stopping rule)."""
        report = self.sink.report
        return self.stop.count > 0 or report.stopped_for is not None or report.stopped

    def run(self) -> None:
        """Play until every pair is stored, or a stop was asked for and the pairs in flight are done."""
        with self.stop.installed():
            self.executor = self.factory(self.playing)
            try:
                while (self.todo and not self.stopping) or self.in_flight:
                    self._notice_stops()
                    if self.discard:
                        log.warning("discarding %d pairs in flight (a resume replays them)", len(self.in_flight))
                        break
                    self._submit()
                    self._collect()
            finally:
                self._finish()

    def _notice_stops(self) -> None:
        if self.stop.count == self._stops_seen:
            return
        self._stops_seen = self.stop.count
        self.sink.report.interrupted = True
        if self.stop.count == 1:
            log.warning("interrupted: finishing %d pairs in flight (Ctrl-C again to discard them)", len(self.in_flight))
        else:
            self.discard = True

    def _submit(self) -> None:
        """Submit pairs up to the pairs kept in flight, in batches a worker plays at once: full
        ones while more pairs follow, the last ones shared evenly among the workers."""
        submitting: list[PairTask] = []
        while (self.todo and not self.stopping
               and len(self.in_flight) + len(submitting) < pairs_in_flight(self.config.concurrency, self.todo)):
            if not self._room_for_a_pair():
                break
            task = self.todo.popleft()
            if self.sink.refused_entrants(task):
                self._store(self.sink.refuse_withdrawn, task)
                continue
            if self.playing is not None:
                self.playing[task.pair_index] = 0
            submitting.append(task)
        if submitting:
            self.in_flight.update(submit_pairs(self.executor, play_pair, play_pairs, submitting,
                                               1 if self.todo else self.config.concurrency))

    def _room_for_a_pair(self) -> bool:
        out, report = self.config.output, self.sink.report
        needed = space_needed(self.sink.results.bytes_on_disk(), report.pairs_done_before + report.pairs_played,
                              pairs_in_flight(self.config.concurrency, self.todo))
        if needed != self._reserved:  # the bots' logs on this disk leave it free
            reserve_for_results(out / BOT_LOGS, needed)
            self._reserved = needed
        free = free_space(out)
        if free >= needed:
            return True
        report.stopped_for = (f"{out}: only {free / MIB:.1f} MiB free, and the arena needs {needed / MIB:.1f} MiB "
                              f"to go on (results, bot logs); free some space, then 'arena resume {out}'")
        log.error("stopping: %s", report.stopped_for)
        return False

    def _collect(self) -> None:
        """Store what the pairs in flight finished. When a worker died, the pairs that finished
        before it did keep their results (they are stored first); the rest are played again."""
        finished, _ = cf.wait(list(self.in_flight), timeout=0.25, return_when=cf.FIRST_COMPLETED)
        broken: list[PairTask] = []
        for future in finished:
            task = self.in_flight.pop(future)
            try:
                pair = future.result()
            except BrokenProcessPool:
                broken.append(task)
                continue
            except Exception as exc:  # a harness failure in the worker: never charged to a bot
                self._on_pair_error(task, exc)
                continue
            self._take(task, pair)
        if broken:
            for future, task in list(self.in_flight.items()):  # done since the wait, before the pool broke
                if future.done() and not future.cancelled() and future.exception() is None:
                    del self.in_flight[future]
                    self._take(task, future.result())
            self._on_worker_death(broken)

    def _take(self, task: PairTask, pair: PairOutcome) -> None:
        """Store a pair a worker played (or refuse it, when a bot changed while it played)."""
        if pair.changed:
            self._store(self.sink.refuse, task, pair.changed)
        else:
            self._store(self.sink.record, pair, self.failures.get(task.pair_index, 0) + 1)
            self._ask_stop_rule()
            self.bar.update(2)
            self.bar.set_postfix_str(f"leader {self.sink.leader()}", refresh=False)

    def _ask_stop_rule(self) -> None:
        report = self.sink.report
        if not report.stopped and self.sink.results.decided():
            report.stopped = True
            log.info("the stopping rule decided: no more pairs are started")

    def _store(self, action: Callable[..., None], *args: Any) -> None:
        """Run a store action; a full disk stops the run (the pair is replayed by a resume)."""
        try:
            action(*args)
        except OSError as exc:
            if not disk_full(exc):
                raise
            self.sink.report.stopped_for = str(exc)
            log.error("stopping: %s", exc)
            self.discard = True  # the pairs in flight could not be stored either

    def _on_pair_error(self, task: PairTask, exc: Exception) -> None:
        if disk_full(exc):
            self.todo.appendleft(task)
            self.sink.report.stopped_for = (f"{self.config.output}: the disk is full in a worker ({exc}); free "
                                            f"some space, then 'arena resume {self.config.output}'")
            log.error("stopping: %s", self.sink.report.stopped_for)
            return
        log.error("pair %d failed in the harness; it is replayed", task.pair_index, exc_info=exc)
        self._failed(task, f"the pair failed in the harness every time (last: {exc!r})")

    def _failed(self, task: PairTask, detail: str) -> None:
        """Count one of the pair's own failures: re-queue it, or store it void after the last attempt."""
        failures = self.failures[task.pair_index] = self.failures.get(task.pair_index, 0) + 1
        if failures < MAX_PAIR_ATTEMPTS:
            self.todo.appendleft(task)
        else:
            self._store(self.sink.record, _void_pair(task, detail), failures)

    def _on_worker_death(self, broken: list[PairTask]) -> None:
        """Re-queue every pair in flight; charge only the one the dead worker played; new workers.

        A worker playing a multiplexed batch held several pairs, and which one killed it is not
        known: they are replayed free, each alone (lock-step), so that a pair that kills its
        worker again is the only one on it, and charged. When the dead worker cannot be told apart
        (no exit codes), nobody is charged, but such re-queues are counted too, so a pair that
        keeps killing workers unseen still ends.
        """
        lost = sorted([*broken, *self.in_flight.values()], key=lambda t: t.pair_index, reverse=True)
        self.in_flight.clear()
        dead = self._dead_workers()
        by_worker: dict[int, list[int]] = {}  # a dead worker's pid -> the pairs it held
        for lost_task in lost:
            if self.playing is not None and self.playing[lost_task.pair_index] in dead:
                by_worker.setdefault(self.playing[lost_task.pair_index], []).append(lost_task.pair_index)
        charged = {pairs[0] for pairs in by_worker.values() if len(pairs) == 1}
        unsure = {index for pairs in by_worker.values() if len(pairs) > 1 for index in pairs}
        log.error("a worker died (pid %s); pairs %s were charged (alone on their worker), pairs %s are replayed "
                  "free, each alone (they shared one), %d other pairs in flight are replayed free",
                  sorted(dead) or "unknown", sorted(charged) or "none", sorted(unsure) or "none",
                  len(lost) - len(charged) - len(unsure))
        for lost_task in lost:
            index = lost_task.pair_index
            if not dead or self.playing is None:
                self.unattributed[index] = self.unattributed.get(index, 0) + 1
            if index in unsure:
                lost_task = dataclasses.replace(lost_task, alone=True)
            if index in charged:
                self._failed(lost_task, "its worker died every time")
            elif self.unattributed.get(index, 0) >= MAX_UNATTRIBUTED:
                self._store(self.sink.record, _void_pair(lost_task, "workers kept dying while it played"),
                            self.failures.get(index, 0) + 1)
            else:
                self.todo.appendleft(lost_task)
        self.workers |= worker_pids(self.executor)
        shutdown_executor(self.executor, discard=True)
        self.groups.clear_launched_by(self.workers)
        renew_forwarding()
        self.executor = self.factory(self.playing)
        if self.adopt_orphans:
            reap_strays(self.workers)

    def _dead_workers(self) -> set[int]:
        """Local workers that died by themselves; the pool ends the others with SIGTERM.

        Waits (a few seconds at most) for every worker to be gone, so each has its exit code.
        """
        processes = dict(getattr(self.executor, "_processes", None) or {})
        deadline = time.monotonic() + 5.0
        for process in processes.values():
            process.join(max(0.0, deadline - time.monotonic()))
        return {pid for pid, process in processes.items() if process.exitcode not in (None, -signal.SIGTERM)}

    def _finish(self) -> None:
        self.bar.close()
        self.workers |= worker_pids(self.executor)
        shutdown_executor(self.executor, discard=bool(self.in_flight))
        self.groups.clear_launched_by(self.workers)
        if self.adopt_orphans:
            reap_strays(self.workers)
        self.groups.close()


def play_tournament(
    config: TournamentConfig,
    results: Results,
    *,
    progress: bool | None = None,
    executor_factory: Callable[[], cf.Executor] | None = None,
    reap_orphans: bool = False,
    entrants: Entrants | None = None,
) -> RunReport:
    """Play (or resume) ``config``'s tournament into ``results`` until every pair is stored or it is stopped.

    The caller holds the output folder and opened ``results`` in it
    (``arena.commands.run.run_tournament`` does both). ``progress``: None shows a bar only on
    a terminal. The first Ctrl-C (or SIGTERM) stops submitting and finishes the pairs in
    flight; a second one discards them (a resume replays them). The run also stops by itself
    when the disk under the output folder runs short.
    ``reap_orphans`` (the CLI sets it) makes this process a subreaper that ends whatever a
    dead worker left behind; it changes the whole process, so library callers opt in.
    ``results.decided()`` (a stopping rule) is asked after every stored pair and once before
    the first; once it says yes no pair is started any more, those in flight are finished, and
    the tournament is marked finished.
    ``entrants`` are ``prepare_entrants(config)`` if the caller already has them.
    """
    start = time.monotonic()
    entrants = entrants or prepare_entrants(config)
    stored, pairs = open_tournament(config, entrants, results)
    deals = stored.deals
    log.info("%s: %s deals; %s", config.name, deals.mode,
             "predictable from the seed" if deals.commitment is None else f"sha256(key) = {deals.commitment}")
    report = RunReport(config.output, len(pairs), len(stored.done))
    if stored.finished:
        report.already_finished = True
        return report
    sink = ResultSink(results, stored, report, {p.index: p for p in pairs}, entrants.labels)
    todo = deque(_tasks(config, entrants, [p for p in pairs if p.index not in stored.done]))
    factory = _factory(config, executor_factory)
    bar = progress_bar(2 * len(todo), show=progress, desc=config.name, unit="match")
    # The run's control groups and watchdog, before the workers fork (they share the run)
    # and before this process becomes a subreaper (the watchdog is nobody's child).
    groups = cgroups.begin_run()
    cgroups.sweep_leftovers(config.output / BOT_LOGS, groups.run_id)
    adopt = reap_orphans and not config.cluster and become_subreaper()
    if not config.cluster:  # decide the sandbox here: forked workers inherit it, so a fallback warns once
        resolve_mode(config.sandbox)
    report.stopped = results.decided()
    PairScheduler(config, sink, todo, factory, track_workers=executor_factory is None and not config.cluster,
                  adopt_orphans=adopt, bar=bar, groups=groups).run()
    if report.finished:
        results.finish()
    report.seconds = time.monotonic() - start
    return report


def _factory(config: TournamentConfig, custom: Callable[[], cf.Executor] | None) -> Callable[[Any], cf.Executor]:
    """Makes the run's executors; the local pool's workers report which pair each plays."""
    cluster = config.cluster
    if custom is not None:
        return lambda playing: custom()
    if cluster is not None:
        return lambda playing: cluster_executor(cluster)
    return lambda playing: local_executor(config.concurrency, playing)


def _tasks(config: TournamentConfig, entrants: Entrants, pairs: list[Pair]) -> Iterator[PairTask]:
    settings = MatchSettings(rules=config.rules, time_control=config.time_control, policy=config.fault_policy,
                             sandbox=config.sandbox, fresh=config.fresh, max_games=config.max_games,
                             limits=Limits(disk_bytes=config.disk_mb << 20))
    for pair in pairs:
        a, b = pair.a, pair.b
        yield PairTask(pair.index, pair.seed, (str(config.bots[a].path), str(config.bots[b].path)),
                       (entrants.labels[a], entrants.labels[b]), settings, str(config.output / BOT_LOGS),
                       (entrants.fingerprints[a], entrants.fingerprints[b]))
