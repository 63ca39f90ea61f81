"""Fairness benchmark: does a CPU hog in one pair slow a bot in another pair down?

Two worker processes play at once, as ``arena run --concurrency 2`` does: the victim pair
(``--victim`` against ``bots/random``) plays ``--matches`` matches while the neighbour pair
plays alongside, once ``bots/random`` against ``bots/random`` (the baseline) and once
``bots/hostile/cpuhog`` against ``bots/random``. Printed: the victim's median decision time
(wall, as the arena's clock measures it) in both cases and their ratio (target: at most
1.5x), with control groups and, for comparison, without them (``ARENA_CGROUPS=off``); then the
median cost of a freeze, a thaw and a CPU-counter read of one bot's group.

    .venv/bin/python bench/fairness.py [--matches 3] [--rounds 3] [--victim bots/expert] [--cycles 2000]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.botproc import cgroups, load_manifest, start_bot  # noqa: E402
from arena.matchplay import MatchSettings, SessionPool, play_match  # noqa: E402

RANDOM = ROOT / "bots/random"
HOG = ROOT / "bots/hostile/cpuhog"


def _play(bots: tuple[Path, Path], matches: int | None, seed: int, run_dir: str,
          stop: Any, results: Any) -> None:
    """Play matches (``None``: until ``stop`` is set); put seat 0's decision times (ms)."""
    manifests = (load_manifest(bots[0]), load_manifest(bots[1]))
    times: list[float] = []
    with SessionPool(Path(run_dir), MatchSettings()) as pool:
        played = 0
        while (played < matches) if matches is not None else not stop.is_set():
            outcome = play_match(pool, manifests, f"bench-{seed}-{played}", seed + played)
            times += [think.wall_ms for think in outcome.think_ms if think.seat == 0]
            played += 1
    if matches is not None:
        stop.set()
    results.put((matches is None, times))


def victim_times(victim: Path, neighbour: tuple[Path, Path], matches: int, run_dir: str) -> list[float]:
    """The victim's decision times (ms) while ``neighbour`` plays in a second worker."""
    ctx = multiprocessing.get_context("fork")
    stop, results = ctx.Event(), ctx.Queue()
    side = ctx.Process(target=_play, args=(neighbour, None, 500, run_dir, stop, results))
    main = ctx.Process(target=_play, args=((victim, RANDOM), matches, 1, run_dir, stop, results))
    side.start()
    time.sleep(1.0)  # the neighbour's bots are up (and a hog spinning) before the victim starts
    main.start()
    by_role = dict(results.get(timeout=600) for _ in range(2))
    main.join(30)
    side.join(30)
    times: list[float] = by_role[False]
    return times


def freeze_costs(cycles: int, run_dir: str) -> dict[str, float]:
    """Median microseconds of a freeze, a thaw and a CPU read of a live bot's group."""
    with start_bot(load_manifest(RANDOM), run_dir=run_dir) as bot:
        if bot.cgroup is None:
            return {}
        freeze, thaw, read = [], [], []
        for _ in range(cycles):
            t0 = time.perf_counter_ns()
            bot.freeze()
            t1 = time.perf_counter_ns()
            bot.thaw()
            t2 = time.perf_counter_ns()
            bot.cpu_ns()
            t3 = time.perf_counter_ns()
            freeze.append(t1 - t0)
            thaw.append(t2 - t1)
            read.append(t3 - t2)
    return {k: statistics.median(v) / 1000 for k, v in (("freeze", freeze), ("thaw", thaw), ("cpu read", read))}


def one_mode(args: argparse.Namespace) -> dict[str, Any]:
    """Both cases in this process's mode (control groups as detected or turned off)."""
    run = cgroups.begin_run()
    with tempfile.TemporaryDirectory(prefix="arena-fair-") as run_dir:
        alone: list[float] = []
        beside: list[float] = []
        for _ in range(args.rounds):  # alternated, so that the machine's own drift hits both cases
            alone += victim_times(args.victim, (RANDOM, RANDOM), args.matches, run_dir)
            beside += victim_times(args.victim, (HOG, RANDOM), args.matches, run_dir)
        costs = freeze_costs(args.cycles, run_dir)
    alone_ms, beside_ms = statistics.median(alone), statistics.median(beside)
    return {"cgroups": None if run.hierarchy is None else run.hierarchy.kind, "alone_ms": alone_ms,
            "beside_hog_ms": beside_ms, "ratio": beside_ms / alone_ms, "costs_us": costs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=3, help="victim matches per case and round (default 3)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each case once per round (default 3)")
    parser.add_argument("--victim", type=Path, default=ROOT / "bots/expert", help="the victim's bot folder")
    parser.add_argument("--cycles", type=int, default=2000, help="freeze/thaw cycles timed (default 2000)")
    parser.add_argument("--one-mode", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_mode:
        print(json.dumps(one_mode(args)))
        return
    cores = len(os.sched_getaffinity(0))
    print(f"victim {args.victim.name} vs random, {args.rounds} x {args.matches} matches; neighbour pair random vs random, "
          f"then hostile-cpuhog vs random; 2 workers on {cores} cores")
    base = [sys.executable, __file__, "--one-mode", "--matches", str(args.matches), "--rounds", str(args.rounds),
            "--victim", str(args.victim),
            "--cycles", str(args.cycles)]
    for label, env in (("with cgroups", {}), ("without cgroups", {cgroups.ENV_SWITCH: "off"})):
        done = subprocess.run(base, capture_output=True, text=True, env={**os.environ, **env}, check=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        kind = f" ({row['cgroups']})" if row["cgroups"] else ""
        print(f"{label + kind:>20}: victim median {row['alone_ms']:.3f} ms alone, {row['beside_hog_ms']:.3f} ms "
              f"beside the hog: ratio {row['ratio']:.2f}x (target <= 1.5x)")
        if row["costs_us"]:
            costs = row["costs_us"]
            print(f"{'':>20}  per decision: freeze {costs['freeze']:.1f} us, thaw {costs['thaw']:.1f} us, "
                  f"CPU read {costs['cpu read']:.1f} us (medians of {args.cycles})")


if __name__ == "__main__":
    main()
