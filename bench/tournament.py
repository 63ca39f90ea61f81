"""Whole-``arena run`` throughput: lock-step (``--max-games 1``) against multiplexed, in one run.

Plays the same round robin of random bots (public deals, one seed) through the real command
line twice per run, once with each setting, and prints hands/s of the whole run (start-up,
sandboxes, storing and ratings included), the medians and their ratio. The two stored
results are checked equal match by match.

    .venv/bin/python bench/tournament.py [--bots 3] [--pairs 40] [--games 16] [--runs 1] [--concurrency 2]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATCHES = "SELECT pair_index, half, winner_seat, score0, score1, hands FROM matches ORDER BY pair_index, half"


def run(out: Path, games: int, args: argparse.Namespace) -> tuple[float, list[tuple[object, ...]]]:
    """One ``arena run`` with ``--max-games games``; (hands/s, its stored matches)."""
    labelled = [f"random{i}={ROOT / 'bots/random'}" for i in range(args.bots)]  # two entrants never share a label
    command = [sys.executable, "-m", "arena.cli", "run", "--bots", *labelled,
               "--pairs", str(args.pairs), "--public-deals", "--seed", "5", "--concurrency", str(args.concurrency),
               "--max-games", str(games), "--out", str(out), "--quiet", "--allow-unvalidated",
               "--time-limit-ms", "5000"]
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    with sqlite3.connect(out / "arena.sqlite") as con:
        matches = con.execute(MATCHES).fetchall()
    return sum(int(row[-1]) for row in matches) / seconds, matches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bots", type=int, default=3, help="random bots in the round robin")
    parser.add_argument("--pairs", type=int, default=40, help="pairs per pairing")
    parser.add_argument("--games", type=int, default=16, help="--max-games of the multiplexed run")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    lock, multi = [], []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        for i in range(args.runs):
            lock_rate, lock_matches = run(Path(tmp) / f"lock{i}", 1, args)
            multi_rate, multi_matches = run(Path(tmp) / f"multi{i}", args.games, args)
            assert multi_matches == lock_matches, "the multiplexed run stored other results"
            lock.append(lock_rate)
            multi.append(multi_rate)
            print(f"run {i + 1}: lock-step {lock_rate:.0f} hands/s, multiplexed {multi_rate:.0f} hands/s "
                  f"({len(lock_matches)} matches, {sum(int(r[-1]) for r in lock_matches)} hands)")
    lock_median, multi_median = statistics.median(lock), statistics.median(multi)
    print(f"lock-step   (--max-games 1):  {lock_median:8.0f} hands/s")
    print(f"multiplexed (--max-games {args.games}): {multi_median:8.0f} hands/s")
    print(f"ratio: {multi_median / lock_median:.2f}x   (concurrency {args.concurrency}, load {_load()})")


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


if __name__ == "__main__":
    main()
