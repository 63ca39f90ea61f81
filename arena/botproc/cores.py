"""Cores of their own for each pool worker, and for the bots of its lock-step pairs.

A pool worker plays one pair at a time when the pair is lock-step (``multiplex.games_at_once``
is 1), and only the bot to move in it runs. Each worker takes a place (its *slot*) when it
starts, and the bots it launches for lock-step pairs are pinned to that slot's cores by their
control group's cpuset, which a bot cannot widen (``sched_setaffinity`` within a cpuset only
narrows). So a bot that keeps busy processes in the background (``bots/hostile/cpuhog``)
competes only with its own pair for the cores it runs on, never with the bots thinking in the
other pairs (``PINNING_WHY``).

The worker itself runs on one core (``pin_to_slot``; the slots take turns over the cores, so with
bots capped at one CPU it is its lock-step bots' core): its referees, and its ZeroMQ context's I/O
thread, which it starts later and which inherits the pin.
The bots it launches do not inherit it: the thread that forks them (``process._launcher``) may
use every core the worker could (``unpin_thread``), and a lock-step bot's control group narrows
that to its slot's cores (``WORKER_PINNING_WHY``).
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

WORKER_PINNING_WHY = """A worker's main thread hands every message to its ZeroMQ I/O thread and
back. Left to the scheduler, the two ran on whichever core was free, as did the other worker's.
Held to one core, in multiplexed play (three random bots, 16 games a process, two workers on two
cores, 2026-12-04, interleaved runs): 1878 hands/s against 1736 for a whole run of 3000 pairs,
1578 against 1490 for 900 pairs, and 11-15% more in the middle of a run. Held to one core by hand
mid-run, the workers alone gave 2044 hands/s, with their bots on the same core too 1968, with the
bots on the other core 1702, and free 1742: so the bots stay free. Lock-step play did not change
(656 against 631 hands/s, within the runs' spread): there the bot thinks while its worker waits.
Held to its slot's core, a worker's refereeing also takes CPU only from its own lock-step pair's
bots, never from a bot thinking in another pair."""

_slot: int | None = None
_allowed: tuple[int, ...] = ()  # the cores this process could use when it took its slot


def take_slot(slot: int | None) -> None:
    """Make ``slot`` (a pool worker's place among the workers, from 0) this process's: the
    bots it launches pinned from now on run on that slot's cores, out of the cores it may use
    now (call it before ``pin_to_slot``). None: no slot (not pinned)."""
    global _slot, _allowed
    _slot = slot
    _allowed = tuple(sorted(os.sched_getaffinity(0))) if slot is not None else ()


def slot_core(allowed: Sequence[int]) -> int | None:
    """The core a pool worker of this process's slot runs on: the slots take turns over
    ``allowed``. None (any core) without a slot, or with fewer than two cores."""
    if _slot is None or len(allowed) < 2:
        return None
    return allowed[_slot % len(allowed)]


def pin_to_slot() -> None:
    """Hold the calling thread, a pool worker's main thread before it starts any other (they
    inherit it), to its slot's core (``WORKER_PINNING_WHY``); nothing without a slot."""
    core = slot_core(_allowed)
    if core is not None:
        os.sched_setaffinity(0, {core})


def unpin_thread() -> None:
    """Let the calling thread, and the processes it forks, run on every core this process could
    use when it took its slot (a pinned worker's bot launcher); nothing without a slot."""
    if _slot is not None and _allowed:
        os.sched_setaffinity(0, _allowed)


def own_cores(cpus: float | None, allowed: Sequence[int] | None = None) -> tuple[int, ...] | None:
    """The cores a pinned bot of this process's slot may run on: as many as its CPU cap
    (``cpus``, rounded up), the slots taking turns over ``allowed`` (default: the cores this
    process may use). None (any core) without a slot, without a cap, or where fewer than two
    slots fit."""
    if _slot is None or cpus is None:
        return None
    if allowed is None:
        allowed = _allowed or sorted(os.sched_getaffinity(0))
    width = math.ceil(cpus)
    slots = len(allowed) // width
    if slots < 2:
        return None
    start = (_slot % slots) * width
    return tuple(allowed[start:start + width])


def cpu_list(cores: Sequence[int]) -> str:
    """``cores`` in the kernel's list format (``0,2,3``)."""
    return ",".join(str(core) for core in cores)
