"""Whole-``arena run`` throughput: lock-step (``--max-games 1``) against multiplexed, in one run.

Plays the same round robin of random bots (public deals, one seed) through the real command
line, lock-step then multiplexed, ``--runs`` times, and prints for each run the hands/s of the
whole run (start-up, sandboxes, storing, ratings and the leaderboard included), the CPU
milliseconds per hand of the whole process tree (arena and bots, sampled from /proc every 100 ms
by ``machine.run_sampled``), and the ratio of the two runs side by side. Then the medians, and
the CPU per hand split between the bots, the arena's parent process and the rest (the workers,
and the sandboxes' own small processes). The two stored results are checked equal match by match.

A run pays a second or two that do not depend on its length (imports, eight sandboxed bot
processes starting, the last matches winding down, the leaderboard). The bench measures them
with one run of a single pair per pairing in each mode and prints, besides the whole-run
figures, the hands/s beyond them (hands over the run's seconds minus that fixed part). The
default 300 pairs per pairing (900 pairs, about 7,600 hands: a small tournament, whose
lock-step run takes half a minute here) keep the fixed part to about a tenth of the
multiplexed run; ``--pairs 100`` (about 2,500 hands) or ``--pairs 40`` show how shorter runs
fare, the fixed part weighing on the multiplexed run more.

The bench also prints how many cores each run kept busy (CPU seconds per second) and the ratio
of the two runs' CPU per hand. A run that keeps every core busy is CPU-bound: its hands/s is the
cores over its CPU per hand. When both runs are CPU-bound, the hands/s ratio is lock-step's CPU
per hand over multiplexed's: to raise it, multiplexed play must cost less CPU per hand. That CPU
ratio also varies less with the machine's load than hands/s do.

The last lines say what 3x would need (``needs``). Both modes do the same work per decision;
lock-step pays besides a wakeup, a thaw and a freeze per request, the difference of the two
runs' CPU per hand. The CPU ratio is one plus that difference over multiplexed's CPU per hand,
so work saved in both modes (a faster engine, codec or SDK) lowers multiplexed's CPU per hand
and the difference hardly at all: 3x needs multiplexed play at half the difference or less. The
bench prints that bound beside what the bots and the arena's parent take of multiplexed play,
which no change to the workers lowers.

The ratio depends on the machine's speed, which the bench prints before and after the runs
(``machine.calibration_us``). Lock-step waits for a process to wake up at every decision, a
cost that does not shrink in proportion to a slower core; and on a slow enough core lock-step
is CPU-bound as well, so the ratio falls toward the ratio of CPU per hand. Runs of this bench
here gave 3.1-3.7x one day, and 2.0-2.4x on a day the calibration read 20-26 us, twice the
time a quiet core takes.

Before timing anything the bench compiles the packages' bytecode (``compileall``, into the
checkout's ``__pycache__`` folders, which git ignores): a user's second run finds it there. With
``PYTHONDONTWRITEBYTECODE`` set in the environment, every run would otherwise compile about a
hundred modules from source, some 0.3 s of the fixed part that no installed arena pays.

    .venv/bin/python bench/tournament.py [--bots 3] [--pairs 300] [--games 16] [--runs 3] [--concurrency 2]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from machine import calibration_us, load_average, run_sampled  # bench/machine.py: a script's folder is on its import path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("arena", "protocol", "results", "botkit")  # what the arena and the bots' SDK import
MATCHES = "SELECT pair_index, half, winner_seat, score0, score1, hands FROM matches ORDER BY pair_index, half"


@dataclass(frozen=True)
class Run:
    """One ``arena run``: hands/s, CPU ms per hand, its stored matches and its seconds."""

    hands_per_s: float
    cpu_ms_per_hand: float
    matches: list[tuple[int, ...]]
    hands: int
    seconds: float
    bots_ms_per_hand: float  # the part of cpu_ms_per_hand that the bot processes used
    parent_ms_per_hand: float  # the part that the arena's own process used (storing, ratings)

    @property
    def cores_busy(self) -> float:
        """CPU seconds the run's processes used per second of the run."""
        return self.cpu_ms_per_hand * self.hands / 1000.0 / self.seconds

    def beyond(self, fixed_s: float) -> float:
        """Hands/s over the seconds beyond ``fixed_s``."""
        return self.hands / max(1e-9, self.seconds - fixed_s)


def run(out: Path, games: int, args: argparse.Namespace, pairs: int | None = None) -> Run:
    """One ``arena run`` with ``--max-games games`` (and ``pairs`` per pairing, else ``--pairs``)."""
    labelled = [f"random{i}={ROOT / 'bots/random'}" for i in range(args.bots)]  # two entrants never share a label
    command = [sys.executable, "-m", "arena.cli", "run", "--bots", *labelled,
               "--pairs", str(pairs or args.pairs), "--public-deals", "--seed", "5", "--concurrency", str(args.concurrency),
               "--max-games", str(games), "--out", str(out), "--quiet", "--allow-unvalidated",
               "--time-limit-ms", "5000"]
    tree = run_sampled(command, ROOT)
    with sqlite3.connect(out / "arena.sqlite") as con:
        matches = con.execute(MATCHES).fetchall()
    hands = sum(int(row[-1]) for row in matches)
    return Run(hands / tree.seconds, tree.cpu_s / hands * 1000.0, matches, hands, tree.seconds,
               tree.bots_s / hands * 1000.0, tree.root_s / hands * 1000.0)


def needs(lock_ms: float, multi_ms: float, floor_ms: float, target: float = 3.0) -> str:
    """What ``target`` needs of multiplexed play, from the two runs' CPU per hand.

    Both runs do the same work per decision (views, codec, engine, the bots' own code); lock-step
    pays besides a wakeup, a thaw and a freeze for every request: ``lock_ms - multi_ms`` per hand,
    a cost of the machine's context switches and control-group writes, not of Python. Two
    CPU-bound runs' hands/s ratio is then ``1 + that / multi_ms``: work saved on both sides lowers
    ``multi_ms`` but not the difference, so ``target`` needs ``multi_ms`` at most the difference
    over ``target - 1``. ``floor_ms`` is what multiplexed play spends outside its workers (the
    bots and the arena's parent process), which no change to the workers lowers.
    """
    own = lock_ms - multi_ms
    most = own / (target - 1.0)
    return (f"{target:g}x of CPU per hand needs multiplexed play at <= {most:.2f} ms CPU/hand: lock-step's own "
            f"cost is {own:.2f} ms/hand (lock-step minus multiplexed) and the CPU ratio is 1 + that over "
            f"multiplexed's {multi_ms:.2f} ms; the bots and the arena's parent alone take {floor_ms:.2f} ms of it, "
            f"leaving the workers and the rest {max(0.0, most - floor_ms):.2f} ms/hand (they take "
            f"{multi_ms - floor_ms:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bots", type=int, default=3, help="random bots in the round robin")
    parser.add_argument("--pairs", type=int, default=300, help="pairs per pairing")
    parser.add_argument("--games", type=int, default=16, help="--max-games of the multiplexed run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    lock: list[Run] = []
    multi: list[Run] = []
    subprocess.run([sys.executable, "-m", "compileall", "-q", *PACKAGES], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    calibration = [calibration_us()]
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        fixed = (run(Path(tmp) / "lock-fixed", 1, args, pairs=1).seconds,
                 run(Path(tmp) / "multi-fixed", args.games, args, pairs=1).seconds)
        for i in range(args.runs):
            lock.append(run(Path(tmp) / f"lock{i}", 1, args))
            multi.append(run(Path(tmp) / f"multi{i}", args.games, args))
            assert multi[-1].matches == lock[-1].matches, "the multiplexed run stored other results"
            print(f"run {i + 1}: lock-step {lock[-1].hands_per_s:5.0f} hands/s ({lock[-1].cpu_ms_per_hand:.2f} ms "
                  f"CPU/hand), multiplexed {multi[-1].hands_per_s:5.0f} hands/s ({multi[-1].cpu_ms_per_hand:.2f} ms "
                  f"CPU/hand), ratio {multi[-1].hands_per_s / lock[-1].hands_per_s:.2f}x "
                  f"({len(lock[-1].matches)} matches, {lock[-1].hands} hands, cores busy {lock[-1].cores_busy:.2f} "
                  f"and {multi[-1].cores_busy:.2f}, load {load_average()})")
    calibration.append(calibration_us())
    med = statistics.median
    ratios = [m.hands_per_s / lk.hands_per_s for m, lk in zip(multi, lock)]
    print(f"lock-step   (--max-games 1):  {med(r.hands_per_s for r in lock):6.0f} hands/s  "
          f"{med(r.cpu_ms_per_hand for r in lock):.2f} ms CPU/hand")
    print(f"multiplexed (--max-games {args.games}): {med(r.hands_per_s for r in multi):6.0f} hands/s  "
          f"{med(r.cpu_ms_per_hand for r in multi):.2f} ms CPU/hand")
    print(f"ratio: {med(ratios):.2f}x median of the runs' ratios (range {min(ratios):.2f}-{max(ratios):.2f}x; "
          f"target >= 3x), concurrency {args.concurrency}, load {load_average()}")
    for label, runs in (("lock-step", lock), ("multiplexed", multi)):
        bots, parent = med(r.bots_ms_per_hand for r in runs), med(r.parent_ms_per_hand for r in runs)
        print(f"{label} CPU/hand by process: bots {bots:.2f} ms, arena parent {parent:.2f} ms, workers and the "
              f"rest {med(r.cpu_ms_per_hand for r in runs) - bots - parent:.2f} ms")
    cpu_ratios = [lk.cpu_ms_per_hand / m.cpu_ms_per_hand for m, lk in zip(multi, lock)]
    print(f"CPU per hand, lock-step over multiplexed: {med(cpu_ratios):.2f}x (range {min(cpu_ratios):.2f}-"
          f"{max(cpu_ratios):.2f}x), which the hands/s ratio equals when both runs keep every core busy; cores busy: "
          f"lock-step {med(r.cores_busy for r in lock):.2f}, multiplexed {med(r.cores_busy for r in multi):.2f} "
          f"of {os.cpu_count()}")
    print(needs(med(r.cpu_ms_per_hand for r in lock), med(r.cpu_ms_per_hand for r in multi),
                med(r.bots_ms_per_hand + r.parent_ms_per_hand for r in multi)))
    beyond = [m.beyond(fixed[1]) / lk.beyond(fixed[0]) for m, lk in zip(multi, lock)]
    print(f"fixed part (one pair per pairing): lock-step {fixed[0]:.1f} s, multiplexed {fixed[1]:.1f} s; beyond it: "
          f"lock-step {med(r.beyond(fixed[0]) for r in lock):.0f} hands/s, multiplexed "
          f"{med(r.beyond(fixed[1]) for r in multi):.0f} hands/s, ratio {med(beyond):.2f}x "
          f"(range {min(beyond):.2f}-{max(beyond):.2f}x)")
    print(f"calibration: {calibration[0]:.1f} us before the runs, {calibration[1]:.1f} us after (sum(range(1000)); "
          "~9-10 us on a quiet core)")


if __name__ == "__main__":
    main()
