"""Arena throughput and overhead with real bot processes over ZeroMQ.

Prints hands/s and decisions/s for two random bots played lock-step (one match at a time)
and multiplexed (many matches in flight on the same two processes, ``max_games > 1``), the
per-decision round trip of an echo bot (p50/p99: the arena's send to its receive, the bot's
own time being negligible), and the random bot's RSS. Medians of ``--runs`` runs.

    .venv/bin/python bench/protocol.py [--matches 40] [--runs 3] [--games 16]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

# This file is named like the ``protocol`` package: keep its folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from arena.botproc import load_manifest  # noqa: E402
from arena.clock import TimeControl
from arena.conductor import play_matches
from arena.engine.records import MatchOutcome
from arena.matchplay import MatchSettings, SessionPool
from arena.referee import Referee

ROOT = Path(__file__).resolve().parent.parent


def run_matches(pool: SessionPool, bot: str, seeds: list[int], in_flight: int) -> tuple[float, list[MatchOutcome]]:
    """Play one match per seed with ``in_flight`` at once on two processes; (seconds, outcomes)."""
    manifest = load_manifest(ROOT / bot)
    sessions = (pool.acquire(manifest), pool.acquire(manifest))
    settings = pool.settings
    outcomes: list[MatchOutcome] = []
    start = time.perf_counter()
    for first in range(0, len(seeds), in_flight):
        batch = [
            (Referee(f"b{seed}", seed, settings.rules, ("a", "b"), settings.time_control), sessions)
            for seed in seeds[first:first + in_flight]
        ]
        outcomes += play_matches(batch)
    elapsed = time.perf_counter() - start
    for session in sessions:
        pool.release(session, faulted=False)
    return elapsed, outcomes


def count(outcomes: list[MatchOutcome]) -> tuple[int, int]:
    """(hands, decisions) over the outcomes; every match must be clean."""
    assert all(not o.faults for o in outcomes), [f.describe() for o in outcomes for f in o.faults]
    return sum(len(o.results) for o in outcomes), sum(len(o.think_ms) for o in outcomes)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--games", type=int, default=16, help="matches in flight when multiplexed")
    args = parser.parse_args()
    seeds = list(range(args.matches))
    lock, multi, rtt, cycle = [], [], [], []
    rss = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as run_dir:
        control = TimeControl(time_limit_ms=5000, bank_ms=10_000)
        for run in range(args.runs):
            with SessionPool(Path(run_dir), MatchSettings(time_control=control, max_games=1)) as pool:
                secs, outs = run_matches(pool, "bots/random", seeds, 1)
                hands, decisions = count(outs)
                lock.append((hands / secs, decisions / secs))
                secs, outs = run_matches(pool, "bench/bots/echo", seeds, 1)
                _, decisions = count(outs)
                rtt += [think.wall_ms for o in outs for think in o.think_ms]
                cycle.append(secs / decisions * 1000.0)
            with SessionPool(Path(run_dir), MatchSettings(time_control=control, max_games=args.games)) as pool:
                secs, outs = run_matches(pool, "bots/random", seeds, args.games)
                hands, decisions = count(outs)
                multi.append((hands / secs, decisions / secs))
                rss += [s.process.rss_bytes() or 0 for s in pool.idle if s.process is not None]
    med = statistics.median
    lock_h, lock_d = med(h for h, _ in lock), med(d for _, d in lock)
    multi_h, multi_d = med(h for h, _ in multi), med(d for _, d in multi)
    print(f"{args.runs} runs x {args.matches} matches, random vs random, bubblewrap sandbox if available")
    print(f"lock-step    {lock_h:8,.0f} hands/s  {lock_d:9,.0f} decisions/s")
    print(f"multiplexed  {multi_h:8,.0f} hands/s  {multi_d:9,.0f} decisions/s  ({args.games} in flight)")
    print(f"ratio        {multi_h / lock_h:8.2f}x   (target >= 3x)")
    print(f"echo round trip p50 {percentile(rtt, 0.5):.3f} ms  p99 {percentile(rtt, 0.99):.3f} ms  "
          f"(arena send -> receive; target p99 < 1 ms)")
    print(f"full decision cycle (engine + view + codec + round trip) {med(cycle):.3f} ms")
    print(f"random bot RSS {max(rss) / 2**20:.1f} MiB max (target < 40 MB)")


if __name__ == "__main__":
    main()
