"""The fixed part of an ``arena run``: what a run of one pair per pairing costs, and where it goes.

Plays bench/tournament.py's round robin (three random bots, public deals, seed 5) with one pair
per pairing, ``--runs`` times, through the real command line, and prints the median of:

- the wall seconds of the whole command (what bench/tournament.py calls the fixed part);
- the CPU seconds of the command's whole process tree (the runner, its workers, the sandboxes
  and the bots in them, sampled from /proc every 100 ms by ``machine.run_sampled``), and of the
  bots alone, which move less than wall time when other work shares the machine;
- where the wall time goes, read from the run's own log (millisecond timestamps):
  ``start-up`` (command start to the first bot launched: the interpreter, imports, the results
  database, the watchdog, the workers forked), ``bots`` (to the last bot ready: sandboxes and
  handshakes, overlapping the first matches), ``play`` (to the last log line of a worker: the
  matches, the pools ending their bots) and ``wind-down`` (to the command's exit: the workers
  joined, the leaderboard, the interpreter's exit).

``--against DIR`` runs another checkout of the arena (with its own ``.venv``) alternately with
this one and prints both, for a before/after on the same machine at the same time.

    .venv/bin/python bench/startup.py [--runs 7] [--max-games 16] [--against /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from machine import load_average, run_sampled  # bench/machine.py: a script's folder is on its import path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("arena", "protocol", "results", "botkit")
PHASES = ("start-up", "bots", "play", "wind-down")
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \S+ (\S+) ")


@dataclass(frozen=True)
class Run:
    """One ``arena run``: its wall seconds, the CPU seconds of its process tree and of the bots in
    it, and the seconds of each phase."""

    wall: float
    cpu: float
    bots_cpu: float
    phases: tuple[float, ...]


def one_run(checkout: Path, out: Path, max_games: int) -> Run:
    """One ``arena run`` of one pair per pairing from ``checkout``, into ``out``."""
    bots = [f"random{i}={checkout / 'bots/random'}" for i in range(3)]
    command = [str(checkout / ".venv/bin/python"), "-m", "arena.cli", "run", "--bots", *bots, "--pairs", "1",
               "--public-deals", "--seed", "5", "--concurrency", "2", "--max-games", str(max_games),
               "--out", str(out), "--quiet", "--allow-unvalidated", "--time-limit-ms", "5000"]
    start = time.time()  # the epoch, as the log's timestamps
    tree = run_sampled(command, checkout)
    end = time.time()
    return Run(end - start, tree.cpu_s, tree.bots_s, _phases(out / "arena.log", start, end))


def _phases(log: Path, start: float, end: float) -> tuple[float, ...]:
    """The seconds of each of PHASES, from the log's timestamps between ``start`` and ``end``."""
    launched: list[float] = []
    ready: list[float] = []
    worker_lines: list[float] = []
    for line in log.read_text(encoding="utf-8").splitlines():
        match = _STAMP.match(line)
        if match is None:
            continue
        when = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        if "started bot" in line:
            launched.append(when)
        elif " ready (pid" in line:
            ready.append(when)
        if match.group(2) != "MainProcess":
            worker_lines.append(when)
    if not (launched and ready and worker_lines):
        return tuple(float("nan") for _ in PHASES)
    marks = [start, min(launched), max(ready), max(worker_lines), end]
    return tuple(b - a for a, b in zip(marks, marks[1:]))


def summary(name: str, runs: list[Run], max_games: int) -> str:
    """One line of medians."""
    med = statistics.median
    phases = ", ".join(f"{phase} {med(r.phases[i] for r in runs):.2f}" for i, phase in enumerate(PHASES))
    return (f"{name}: --max-games {max_games}: {med(r.wall for r in runs):.2f} s wall (range "
            f"{min(r.wall for r in runs):.2f}-{max(r.wall for r in runs):.2f}), {med(r.cpu for r in runs):.2f} s CPU "
            f"of the process tree, {med(r.bots_cpu for r in runs):.2f} s of it the bots'; {phases} (s, medians of {len(runs)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--max-games", type=int, default=16)
    parser.add_argument("--against", type=Path, help="another checkout with its own .venv, run alternately")
    args = parser.parse_args()
    checkouts = [ROOT] + ([args.against.resolve()] if args.against else [])
    for checkout in checkouts:  # as bench/tournament.py: the bytecode a user's second run finds
        subprocess.run([str(checkout / ".venv/bin/python"), "-m", "compileall", "-q", *PACKAGES], check=True,
                       cwd=checkout, stdout=subprocess.DEVNULL)
    runs: dict[Path, list[Run]] = {c: [] for c in checkouts}
    with tempfile.TemporaryDirectory(prefix="arena-startup-") as tmp:
        for i in range(args.runs):
            for n, checkout in enumerate(checkouts):
                runs[checkout].append(one_run(checkout, Path(tmp) / f"{n}-{i}", args.max_games))
    for checkout in checkouts:
        print(summary(str(checkout), runs[checkout], args.max_games))
    if args.against:
        this, other = (statistics.median(r.wall for r in runs[c]) for c in checkouts)
        print(f"this checkout / the other: {this / other:.2f}x the wall time; load {load_average()}")


if __name__ == "__main__":
    main()
