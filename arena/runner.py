"""The tournament runner: pairs in parallel on a ``concurrent.futures.Executor``, results to the store.

The parent owns the store (the one writer) and the ratings; workers play whole pairs and
return plain dicts. Locally the executor is a fork ``ProcessPoolExecutor`` made once, before
any ZeroMQ context exists in this process; with ``--cluster`` it is a Dask client's
executor. A pair is committed in one transaction with the rating snapshots it unlocks, so a
run stopped at any moment (Ctrl-C, kill -9, power loss) resumes with nothing lost and
nothing counted twice.
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import logging
import multiprocessing
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
from typing import Any, Protocol

from arena.botproc import Limits, Manifest, cgroups, fingerprint, load_manifest, resolve_mode
from arena.botproc.fingerprint import runtime_changes, runtime_files
from arena.faults import Fault, FaultKind
from arena.logsetup import renew_forwarding
from arena.matchplay import MatchSettings, MatchSpec, SessionPool, play_at_once, play_spec
from arena.multiplex import pairs_in_flight, submit_pairs
from arena.referee import MatchOutcome
from arena.schedule import Pair, schedule
from arena.tournament import ConfigError, TournamentConfig
from results.deals import DealMode, Deals, new_key
from results.ratings import PairResults, Rating, RatingEnv, ScheduleRater
from results.store import DB_NAME, Store

log = logging.getLogger(__name__)

MAX_MATCH_ATTEMPTS = 3  # a void (harness-faulted) match is replayed from its seed at most this often
MAX_PAIR_ATTEMPTS = 3  # a pair whose worker died is re-queued at most this often
BOT_LOGS = "bots"
LOG_NAME = "arena.log"


@dataclass(frozen=True, slots=True)
class PairTask:
    """What a worker needs to play one pair: picklable, with no open resources."""

    pair_index: int
    seed: int
    bot_dirs: tuple[str, str]
    labels: tuple[str, str]
    settings: MatchSettings
    run_dir: str


class StopRule(Protocol):
    """Decides from the stored results whether a tournament may end before its schedule does."""

    def decided(self, store: Store, tid: int) -> bool:
        """True once the tournament is decided."""
        ...


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
    ratings: dict[int, Rating] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        """Whether the tournament is over: every pair stored, or its stopping rule decided."""
        return self.complete or self.stopped

    @property
    def complete(self) -> bool:
        """Whether every pair of the schedule is stored."""
        return self.pairs_done_before + self.pairs_played == self.pairs_total


# ---------------------------------------------------------------------- workers

_local = threading.local()
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def worker_init() -> None:
    """In a local worker: ignore Ctrl-C (the parent handles it) and die with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: rely on the broken pipe instead
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
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
        _local.manifests = {}
        # A local worker ends its bots politely when the pool shuts it down.
        multiprocessing.util.Finalize(pool, pool.close, exitpriority=10)
    return pool


def _manifest(bot_dir: str) -> Manifest:
    cache: dict[str, Manifest] = _local.manifests
    if bot_dir not in cache:
        cache[bot_dir] = load_manifest(bot_dir)
    return cache[bot_dir]


def _specs(task: PairTask) -> list[MatchSpec]:
    """The pair's two halves: the same deals, seats swapped."""
    manifests = (_manifest(task.bot_dirs[0]), _manifest(task.bot_dirs[1]))
    return [MatchSpec((manifests[order[0]], manifests[order[1]]), f"p{task.pair_index:05d}h{half}", task.seed,
                      pair_key=task.pair_index, names=(task.labels[order[0]], task.labels[order[1]]))
            for half, order in enumerate(((0, 1), (1, 0)))]


def play_pair(task: PairTask) -> dict[str, Any]:
    """Play both halves of a pair, one after the other (run in a worker); returns plain, picklable results."""
    pool = _session_pool(task.settings, task.run_dir)
    outcomes = [play_spec(pool, spec, attempts=MAX_MATCH_ATTEMPTS).to_dict() for spec in _specs(task)]
    return {"pair_index": task.pair_index, "outcomes": outcomes, "worker": os.getpid()}


def play_pairs(tasks: list[PairTask]) -> list[dict[str, Any]]:
    """Play every half of several pairs at once, multiplexed on the bots' processes (run in a worker)."""
    pool = _session_pool(tasks[0].settings, tasks[0].run_dir)
    outcomes = play_at_once(pool, [spec for task in tasks for spec in _specs(task)], attempts=MAX_MATCH_ATTEMPTS)
    return [{"pair_index": task.pair_index, "outcomes": [o.to_dict() for o in outcomes[2 * i:2 * i + 2]],
             "worker": os.getpid()} for i, task in enumerate(tasks)]


def _void_pair(task: PairTask, detail: str) -> dict[str, Any]:
    """The stored form of a pair that could not be played (harness faults only, never rated)."""
    outcomes = []
    for half in (0, 1):
        fault = Fault(FaultKind.HARNESS, None, "arena", detail, match_id=f"p{task.pair_index:05d}h{half}")
        outcomes.append(MatchOutcome(
            match_id=fault.match_id, seed=task.seed, names=task.labels, rules=task.settings.rules.to_dict(),
            winner=None, score=(0, 0), forfeit=False, void=True, faults=[fault], results=[], records=[],
        ).to_dict())
    return {"pair_index": task.pair_index, "outcomes": outcomes, "worker": None}


# ---------------------------------------------------------------------- executors


def local_executor(workers: int) -> cf.Executor:
    """A fork process pool: made once, before this process opens any ZeroMQ context."""
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                                  initializer=worker_init)


def cluster_executor(address: str) -> cf.Executor:
    """A Dask distributed cluster's executor (needs the ``cluster`` extra)."""
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError("cluster mode needs Dask: pip install 'sixty-six-arena[cluster]'") from None
    client = Client(address, timeout="10s")
    executor: cf.Executor = client.get_executor()
    executor.close_client = client  # type: ignore[attr-defined]
    return executor


def _shutdown(executor: cf.Executor, *, discard: bool) -> None:
    """Stop the executor; ``discard`` also kills local workers still playing (their bots die with them)."""
    if discard:
        for process in list(getattr(executor, "_processes", {}).values()):
            process.kill()
    try:
        executor.shutdown(wait=not discard, cancel_futures=True)
    except TypeError:  # Dask's ClientExecutor has no cancel_futures
        executor.shutdown(wait=not discard)
    client = getattr(executor, "close_client", None)
    if client is not None:
        client.close()


# ---------------------------------------------------------------------- the parent


def check_output_folder(out: Path) -> None:
    """Refuse an output folder that is a file or a foreign non-empty folder; create it if missing.
    (Its bot-log folder may already exist: a volume of its own, mounted there beforehand.)"""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: the output folder is a file")
    foreign = [p for p in out.iterdir() if p.name not in (LOG_NAME, BOT_LOGS)] if out.is_dir() else []
    if foreign and not (out / DB_NAME).exists():
        raise ConfigError(f"{out}: exists and is not an arena output folder (no {DB_NAME}); use a new folder")
    out.mkdir(parents=True, exist_ok=True)


def open_tournament(config: TournamentConfig) -> tuple[Store, int, list[Pair], list[str]]:
    """Open or create the output folder's store for ``config``; check a resumed run matches it."""
    out = config.output
    check_output_folder(out)
    db_path = out / DB_NAME
    manifests = [load_manifest(entry.path) for entry in config.bots]
    labels = _labels(config, manifests)
    prints = [fingerprint(m.bot_dir) for m in manifests]
    store = Store(db_path, create=True)
    try:
        if not store.has_tournament():
            deals = Deals.secret(new_key()) if config.deals is DealMode.SECRET else Deals.public(config.seed)
            pairs = schedule(len(manifests), config.format, config.pairs_per_pairing, deals)
            entrants = [
                {"name": m.name, "version": m.version, "fingerprint": fp, "path": str(m.bot_dir), "label": label}
                for m, fp, label in zip(manifests, prints, labels)
            ]
            tid = store.create_tournament(config.name, config.seed, config.to_dict(), entrants,
                                          [(p.index, p.a, p.b, p.seed) for p in pairs], deal_key=deals.key)
            store.record_runtime(tid, runtime_files())
        else:
            tid = _check_resume(store, config, prints)
            _check_runtime(store, tid)
            deals = store.deals(tid)
            if deals.mode is not config.deals:
                raise ConfigError(f"{out}: the tournament's settings say {config.deals} deals, but its store "
                                  f"holds {deals.mode} ones; the store was changed by hand")
            pairs = schedule(len(manifests), config.format, config.pairs_per_pairing, deals)
    except BaseException:
        store.close()
        raise
    return store, tid, pairs, labels


def _labels(config: TournamentConfig, manifests: list[Manifest]) -> list[str]:
    labels: list[str] = []
    for entry, manifest in zip(config.bots, manifests):
        label = entry.label or manifest.name
        base, n = label, 2
        while label in labels:
            label, n = f"{base}#{n}", n + 1
        labels.append(label)
    return labels


def _check_resume(store: Store, config: TournamentConfig, prints: list[str]) -> int:
    import json

    row = store.tournament()
    stored = TournamentConfig.from_dict(json.loads(row["config_json"]))
    mine, theirs = config.schedule_key(), stored.schedule_key()
    for key in mine:
        if mine[key] != theirs[key]:
            raise ConfigError(f"{config.output}: holds tournament {row['name']!r} whose {key} differs "
                              f"({theirs[key]!r} there, {mine[key]!r} now); use a new output folder or "
                              f"'arena resume {config.output}'")
    for entrant, fp in zip(store.entrants(row["id"]), prints):
        if entrant["fingerprint"] != fp:
            raise ConfigError(
                f"bot {entrant['label']!r} changed since this tournament started (fingerprint "
                f"{entrant['fingerprint'][:12]} then, {fp[:12]} now): a changed bot is a new entrant; "
                f"start a new tournament in a new output folder")
    return int(row["id"])


def _check_runtime(store: Store, tid: int) -> None:
    """Refuse to resume when the project code the bots import (the SDK) changed since the
    tournament started, naming the files; a store from before runtimes were kept records it."""
    now = runtime_files()
    then = store.runtime(tid)
    if then is None:
        log.warning("%s: no runtime fingerprint stored (an older tournament); recording the current one",
                    store.path)
        store.record_runtime(tid, now)
        return
    changes = runtime_changes(then, now)
    if changes:
        shown = ", ".join(changes[:6]) + (f" and {len(changes) - 6} more" if len(changes) > 6 else "")
        raise ConfigError(f"the code every bot runs besides its own folder changed since this tournament "
                          f"started ({shown}): the bots would not be the ones that played; restore those "
                          f"files, or start a new tournament in a new output folder")


def _pair_results(outcomes: list[dict[str, Any]], seats: list[tuple[int, int]]) -> PairResults:
    results: PairResults = []
    for outcome, (seat0, seat1) in zip(outcomes, seats):
        if outcome["void"] or outcome["winner"] is None:
            results.append(None)
        else:
            entrants = (seat0, seat1)
            results.append((entrants[outcome["winner"]], entrants[1 - outcome["winner"]]))
    return results


def _restore_rater(store: Store, tid: int, entrants: int, env: RatingEnv) -> ScheduleRater:
    """The rater at its last stored snapshot, fed with the pairs stored beyond it."""
    rater = ScheduleRater(env, entrants)
    snapshots = store.snapshots(tid)
    if snapshots:
        last = snapshots[-1]["after_pair"]
        rater.restore(last, {r["entrant"]: Rating(r["mu"], r["sigma"]) for r in snapshots if r["after_pair"] == last})
    by_pair: dict[int, list[dict[str, Any]]] = {}
    for match in store.matches(tid):
        by_pair.setdefault(match["pair_index"], []).append(dict(match))
    for index, halves in sorted(by_pair.items()):
        if index >= rater.frontier:
            outcomes = [{"void": m["void"], "winner": m["winner_seat"]} for m in halves]
            rater.add(index, _pair_results(outcomes, [(m["seat0"], m["seat1"]) for m in halves]))
    return rater


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C while the run loop owns the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_tournament(
    config: TournamentConfig,
    *,
    progress: bool | None = None,
    executor_factory: Callable[[], cf.Executor] | None = None,
    reap_orphans: bool = False,
    stop_rule: StopRule | None = None,
) -> RunReport:
    """Run (or resume) ``config``'s tournament until every pair is stored or it is interrupted.

    ``progress``: None shows a bar only on a terminal. The first Ctrl-C stops submitting and
    finishes the pairs in flight; a second one discards them (a resume replays them).
    ``reap_orphans`` (the CLI sets it) makes this process a subreaper that ends whatever a
    dead worker left behind; it changes the whole process, so library callers opt in.
    ``stop_rule`` is asked after every stored pair (and once before the first) whether the
    tournament is decided; then no pair is started any more, those in flight are finished, and
    the tournament is marked finished.
    """
    from tqdm import tqdm

    start = time.monotonic()
    store, tid, pairs, labels = open_tournament(config)
    with store:
        deals = store.deals(tid)
        log.info("%s: %s deals; %s", config.name, deals.mode,
                 "predictable from the seed" if deals.commitment is None else f"sha256(key) = {deals.commitment}")
        done = store.finished_pairs(tid)
        report = RunReport(config.output, len(pairs), len(done))
        env = RatingEnv()
        rater = _restore_rater(store, tid, len(labels), env)
        settings = MatchSettings(rules=config.rules, time_control=config.time_control, policy=config.fault_policy,
                                 sandbox=config.sandbox, fresh=config.fresh, max_games=config.max_games,
                                 limits=Limits(disk_bytes=config.disk_mb << 20))
        run_dir = str(config.output / BOT_LOGS)
        todo = deque(
            PairTask(p.index, p.seed, (str(config.bots[p.a].path), str(config.bots[p.b].path)),
                     (labels[p.a], labels[p.b]), settings, run_dir)
            for p in pairs if p.index not in done
        )
        seats = {p.index: [p.seats(0), p.seats(1)] for p in pairs}
        attempts: dict[int, int] = {}
        factory = executor_factory or (
            (lambda: cluster_executor(cluster)) if (cluster := config.cluster) else (lambda: local_executor(config.concurrency))
        )
        bar = tqdm(total=2 * len(todo), unit="match", disable=(None if progress is None else not progress),
                   desc=config.name, dynamic_ncols=True)
        # The run's control groups and watchdog, before the workers fork (they share the run)
        # and before this process becomes a subreaper (the watchdog is nobody's child).
        run = cgroups.begin_run()
        cgroups.sweep_leftovers(Path(run_dir), run.run_id)
        adopted = reap_orphans and not config.cluster and become_subreaper()
        if not config.cluster:  # decide the sandbox here: forked workers inherit it, so a fallback warns once
            resolve_mode(config.sandbox)
        executor = factory()
        workers: set[int] = set()
        in_flight: dict[cf.Future[dict[str, Any]], PairTask] = {}
        stopping = report.stopped = stop_rule is not None and stop_rule.decided(store, tid)
        if stopping:
            todo.clear()
        try:
            with _sigterm_as_interrupt():
                while todo or in_flight:
                    try:
                        submitting: list[PairTask] = []
                        while (todo and not stopping
                               and len(in_flight) + len(submitting) < pairs_in_flight(config.concurrency, todo)):
                            task = todo.popleft()
                            attempts[task.pair_index] = attempts.get(task.pair_index, 0) + 1
                            if attempts[task.pair_index] > MAX_PAIR_ATTEMPTS:
                                result = _void_pair(task, "the pair failed in the harness every time")
                                _store_pair(store, tid, rater, result, seats[task.pair_index],
                                            MAX_PAIR_ATTEMPTS, report)
                                continue
                            submitting.append(task)
                        in_flight.update(submit_pairs(executor, play_pair, play_pairs, submitting, config.concurrency))
                        finished, _ = cf.wait(list(in_flight), timeout=1.0, return_when=cf.FIRST_COMPLETED)
                        for future in finished:
                            task = in_flight.pop(future)
                            try:
                                result = future.result()
                            except BrokenProcessPool:
                                log.error("a worker died; pair %d and the other pairs in flight are re-queued",
                                          task.pair_index)
                                lost = sorted([task, *in_flight.values()], key=lambda t: t.pair_index)
                                in_flight.clear()
                                todo.extendleft(reversed(lost))
                                workers |= worker_pids(executor)
                                _shutdown(executor, discard=True)
                                run.clear_launched_by(workers)
                                renew_forwarding()
                                executor = factory()
                                if adopted:
                                    reap_strays(workers)
                                break
                            except Exception as exc:  # a harness failure in the worker: never charged
                                log.error("pair %d failed in the harness: %r", task.pair_index, exc)
                                todo.appendleft(task)
                                continue
                            _store_pair(store, tid, rater, result, seats[task.pair_index], attempts[task.pair_index],
                                        report)
                            if stop_rule is not None and not report.stopped and stop_rule.decided(store, tid):
                                report.stopped = stopping = True
                                todo.clear()
                            bar.update(2)
                            bar.set_postfix_str(f"leader {_leader(rater, labels)}", refresh=False)
                    except KeyboardInterrupt:
                        if stopping:
                            report.interrupted = True
                            log.warning("interrupted again: discarding %d pairs in flight", len(in_flight))
                            break
                        stopping = True
                        todo.clear()
                        report.interrupted = True
                        log.warning("interrupted: finishing %d pairs in flight (Ctrl-C again to discard them)",
                                    len(in_flight))
        finally:
            bar.close()
            workers |= worker_pids(executor)
            _shutdown(executor, discard=bool(in_flight))
            run.clear_launched_by(workers)
            if adopted:
                reap_strays(workers)
            run.close()
        if report.finished:
            store.finish_tournament(tid)
        report.ratings = dict(rater.ratings)
        report.seconds = time.monotonic() - start
    return report


def _store_pair(store: Store, tid: int, rater: ScheduleRater, result: dict[str, Any], seats: list[tuple[int, int]],
                attempt: int, report: RunReport) -> None:
    outcomes = result["outcomes"]
    snapshots = rater.add(result["pair_index"], _pair_results(outcomes, seats))
    store.record_pair(tid, result["pair_index"], outcomes, seats, snapshots, attempts=attempt)
    report.pairs_played += 1
    report.faults += sum(len(o["faults"]) for o in outcomes)


def _leader(rater: ScheduleRater, labels: list[str]) -> str:
    best = max(rater.ratings, key=lambda e: (rater.ratings[e].conservative, rater.ratings[e].mu))
    return labels[best]
