"""SPRT false positives: how often ``arena sprt`` of a bot against a copy of itself accepts H1.

Each run is a real ``arena sprt`` (bot processes, secret deals, so the runs are independent)
capped at ``--max-pairs``; the script prints the count of each result and the H1 rate, which
should stay below alpha (0.05 by default).

    .venv/bin/python bench/sprt.py [--runs 20] [--max-pairs 100] [--bot bots/random]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--max-pairs", type=int, default=100)
    parser.add_argument("--bot", default="bots/random")
    parser.add_argument("--elo1", default="5")
    args = parser.parse_args()
    results: Counter[str] = Counter()
    pairs = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-sprt-") as folder:
        for run in range(args.runs):
            done = subprocess.run(
                [sys.executable, "-m", "arena.cli", "sprt", args.bot, args.bot, "--out", f"{folder}/{run}",
                 "--max-pairs", str(args.max_pairs), "--elo1", args.elo1, "--allow-unvalidated", "--quiet",
                 "--json"], capture_output=True, text=True, cwd=ROOT, check=True)
            verdict = json.loads(done.stdout.strip().splitlines()[-1])
            results[verdict["result"]] += 1
            pairs.append(verdict["pairs"])
    elapsed = time.perf_counter() - start
    print(f"{args.bot} against itself, {args.runs} runs of at most {args.max_pairs} pairs (elo0 0, elo1 "
          f"{args.elo1}): {dict(results)}; H1 rate {results['H1'] / args.runs:.0%}; median pairs "
          f"{sorted(pairs)[len(pairs) // 2]}; {elapsed:.0f} s")


if __name__ == "__main__":
    main()
