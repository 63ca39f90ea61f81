"""Cores of their own for the bots of each parallel pair (lock-step play).

A pool worker plays one pair at a time when the pair is lock-step (``multiplex.games_at_once``
is 1), and only the bot to move in it runs. Each worker takes a place (its *slot*) when it
starts, and the bots it launches for lock-step pairs are pinned to that slot's cores by their
control group's cpuset, which a bot cannot widen (``sched_setaffinity`` within a cpuset only
narrows). So a bot that keeps busy processes in the background (``bots/hostile/cpuhog``)
competes only with its own pair for the cores it runs on, never with the bots thinking in the
other pairs (``PINNING_WHY``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

PINNING_WHY = """Capped at one CPU and frozen while it owes nothing, a hog with six busy processes
still took both cores of two whenever it was thinking: its processes ran wherever the scheduler
put them, and an innocent bot thinking in the other pair waited for a CPU behind them. In the
hog tournament of tests/tournament/test_hostile_resources.py (10 ms clocks, a 50 ms bank), three
runs alternated with and without pinning (2026-12-03, two cores): unpinned, the innocent
decisions took 0.36-0.40 ms at the median and up to 15.7-20.4 ms, and `expert` was charged
timeouts in one run of three (as on a CI clone); pinned, 0.17-0.20 ms and up to 1.4-22 ms, and
nobody innocent was charged. Multiplexed play is not pinned: there a worker's bots think at once,
and on one core they would queue while the other core may be idle."""

_slot: int | None = None


def take_slot(slot: int | None) -> None:
    """Make ``slot`` (a pool worker's place among the workers, from 0) this process's: the
    bots it launches pinned from now on run on that slot's cores. None: no slot (not pinned)."""
    global _slot
    _slot = slot


def own_cores(cpus: float | None, allowed: Sequence[int] | None = None) -> tuple[int, ...] | None:
    """The cores a pinned bot of this process's slot may run on: as many as its CPU cap
    (``cpus``, rounded up), the slots taking turns over ``allowed`` (default: the cores this
    process may use). None (any core) without a slot, without a cap, or where fewer than two
    slots fit."""
    if _slot is None or cpus is None:
        return None
    if allowed is None:
        allowed = sorted(os.sched_getaffinity(0))
    width = math.ceil(cpus)
    slots = len(allowed) // width
    if slots < 2:
        return None
    start = (_slot % slots) * width
    return tuple(allowed[start:start + width])


def cpu_list(cores: Sequence[int]) -> str:
    """``cores`` in the kernel's list format (``0,2,3``)."""
    return ",".join(str(core) for core in cores)
