"""How many bits two processes can pass each other through CPU contention alone, beside a tournament.

The two halves of a duplicate pair deal the same cards with the seats swapped, and each bot plays
them on two processes of its own: what one process holds is the opponent's hand in the other's
half. The sandbox leaves them no shared file, socket or memory (docs/fairness.md), but both may
run at once, and a process that keeps a CPU busy slows the others that want one. This bench
measures that channel with two plain processes (not sandboxed: the sandbox changes nothing about
CPU contention, and a bot's CPU cap of one CPU is what one spinning thread uses):

- the sender spins through a slot to send 1 and sleeps through it to send 0, slots aligned on
  ``CLOCK_MONOTONIC`` (shared by every namespace);
- the receiver spins through every slot, counting its loop turns, and reads a slot as 1 when it
  counted fewer than its median.

It prints, for each load and slot length, the share of bits read right and the channel's capacity
(a binary symmetric channel: ``1 - H(error)`` bits per slot, and per second), beside the spread
that chance alone gives a share (two standard errors): a share inside it is no channel at all. The loads: an idle
machine, a multiplexed ``arena run`` of random bots (``--max-games 16``), and a lock-step one; with
``--pin apart`` the two processes are held to different cores (as lock-step pinning holds two
workers' bots), with ``--pin together`` to one.

    .venv/bin/python bench/covert_channel.py [--bits 400] [--slots-ms 2,5,20] [--pin none|apart|together]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOADS = {"idle": None, "multiplexed": 16, "lock-step": 1}  # --max-games of the tournament beside the channel


def message(bits: int, seed: int = 42) -> list[int]:
    """The bits both sides agree on."""
    rng = random.Random(seed)
    return [rng.randrange(2) for _ in range(bits)]


def _slot_end(start: float, slot: float, i: int) -> float:
    """Sleep until slot ``i`` begins; when it ends."""
    begin = start + i * slot
    if (ahead := begin - time.monotonic()) > 0:
        time.sleep(ahead)
    return begin + slot


def send(start: float, slot: float, bits: list[int]) -> None:
    """Spin through the slots of the 1s, sleep through those of the 0s."""
    for i, bit in enumerate(bits):
        end = _slot_end(start, slot, i)
        while bit and time.monotonic() < end:
            pass


def receive(start: float, slot: float, count: int) -> list[int]:
    """Loop turns counted in each slot."""
    turns = []
    for i in range(count):
        end, n = _slot_end(start, slot, i), 0
        while time.monotonic() < end:
            n += 1
        turns.append(n)
    return turns


def capacity(error: float) -> float:
    """Bits per use of a binary symmetric channel that flips a bit with probability ``error``."""
    p = min(error, 1.0 - error)
    return 1.0 if p <= 0.0 else 1.0 + p * math.log2(p) + (1.0 - p) * math.log2(1.0 - p)


def measure(slot: float, bits: list[int], cores: tuple[set[int] | None, set[int] | None]) -> float:
    """Run a sender and a receiver for ``bits`` in slots of ``slot`` s; the share read right."""
    start = time.monotonic() + 0.5
    common = [sys.executable, __file__, "--start", str(start), "--slot", str(slot), "--bits", str(len(bits))]
    def child(role: str, core: set[int] | None) -> subprocess.Popen[str]:
        pin = ["--cores", ",".join(map(str, sorted(core)))] if core else []
        return subprocess.Popen([*common, "--role", role, *pin], stdout=subprocess.PIPE, text=True)
    sender, receiver = child("send", cores[0]), child("recv", cores[1])
    out, _ = receiver.communicate()
    sender.wait()
    turns = json.loads(out)
    median = statistics.median(turns)
    right: int = sum((n < median) == bool(bit) for n, bit in zip(turns, bits))
    return right / len(bits)


@contextmanager
def tournament(max_games: int | None) -> Iterator[None]:
    """A long ``arena run`` of three random bots in the background (nothing for None)."""
    if max_games is None:
        yield
        return
    with tempfile.TemporaryDirectory(prefix="arena-covert-") as tmp:
        bots = [f"random{i}={ROOT / 'bots/random'}" for i in range(3)]
        run = subprocess.Popen([sys.executable, "-m", "arena.cli", "run", "--bots", *bots, "--pairs", "3000",
                                "--public-deals", "--seed", "5", "--concurrency", "2", "--max-games", str(max_games),
                                "--out", tmp, "--quiet", "--allow-unvalidated", "--time-limit-ms", "5000"],
                               cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_for_play(Path(tmp) / "arena.sqlite", run)
            yield
        finally:
            if run.poll() is not None:  # the load ended before the measurements did
                print(f"  (the --max-games {max_games} run ended during these measurements: raise its --pairs)")
            run.terminate()
            run.wait()


def _wait_for_play(database: Path, run: subprocess.Popen[bytes]) -> None:
    """Return once the run has stored a pair: its workers and bots are playing."""
    while run.poll() is None:
        try:
            with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as con:
                if con.execute("SELECT count(*) FROM matches").fetchone()[0]:
                    return
        except sqlite3.Error:  # not made yet
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the tournament ended before it played (exit {run.returncode})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bits", type=int, default=400)
    parser.add_argument("--slots-ms", default="2,5,20")
    parser.add_argument("--pin", choices=("none", "apart", "together"), default="none")
    parser.add_argument("--role", choices=("send", "recv"), help=argparse.SUPPRESS)
    parser.add_argument("--start", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--slot", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--cores", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role:  # one side of the channel
        if args.cores:
            os.sched_setaffinity(0, {int(c) for c in args.cores.split(",")})
        if args.role == "send":
            send(args.start, args.slot, message(args.bits))
        else:
            print(json.dumps(receive(args.start, args.slot, args.bits)))
        return
    cpus = sorted(os.sched_getaffinity(0))
    cores: tuple[set[int] | None, set[int] | None] = {
        "none": (None, None), "apart": ({cpus[0]}, {cpus[-1]}), "together": ({cpus[-1]}, {cpus[-1]})}[args.pin]
    bits = message(args.bits)
    for load, max_games in LOADS.items():
        with tournament(max_games):
            for slot_ms in (float(s) for s in args.slots_ms.split(",")):
                right = measure(slot_ms / 1000.0, bits, cores)
                per_slot = capacity(1.0 - right)
                noise = 2.0 * math.sqrt(0.25 / args.bits)  # two standard errors of a coin's share
                print(f"{load:11} pin {args.pin:8} slot {slot_ms:4.0f} ms: {right:.3f} of {args.bits} bits read right "
                      f"(chance: 0.5 +- {noise:.3f}), "
                      f"capacity {per_slot:.3f} bit/slot = {per_slot * 1000.0 / slot_ms:5.1f} bits/s", flush=True)


if __name__ == "__main__":
    main()
