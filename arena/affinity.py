"""CPU affinity for a local pool: each worker, with the bots it starts, keeps to its own CPUs.

A worker referees its pairs and its bots answer it: every message hops between them. Kept on
one CPU, a hop is a switch on a warm core instead of a wake-up sent to the other one, and the
pairs of one worker cannot slow another's (measured on 2 cores: a sixth to a quarter less CPU
per hand; ``bench/tournament.py --no-affinity`` compares). Bots inherit their worker's
CPUs across fork and exec, and stay capped by their own control group's quota.
"""

from __future__ import annotations

import os
from collections.abc import Sequence


def cpu_sets(workers: int, cpus: Sequence[int]) -> list[frozenset[int]]:
    """The CPUs of each of ``workers`` workers: with as many CPUs as workers or more, every
    ``workers``-th CPU from the worker's own (disjoint sets that cover them all); with fewer,
    one CPU each, round robin."""
    if workers < 1 or not cpus:
        raise ValueError(f"need at least one worker and one CPU, not {workers} and {list(cpus)}")
    ordered = sorted(cpus)
    if workers >= len(ordered):
        return [frozenset({ordered[i % len(ordered)]}) for i in range(workers)]
    return [frozenset(ordered[i::workers]) for i in range(workers)]


def usable_cpus() -> list[int]:
    """The CPUs this process may run on (all of them where Linux affinity is unknown)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


def keep_to(cpus: frozenset[int]) -> bool:
    """Run this process (and what it starts from now on) on ``cpus`` only; False where that is
    not possible (not Linux, or a container that forbids it)."""
    try:
        os.sched_setaffinity(0, cpus)
        return True
    except (AttributeError, OSError):
        return False
