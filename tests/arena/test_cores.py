"""Which cores a lock-step bot of each worker slot runs on (``arena.botproc.cores``), and that
the workers of a local pool take slots of their own."""

from __future__ import annotations

import concurrent.futures as cf
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.botproc import cores
from arena.runner import local_executor

from tests.polling import poll_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def slot() -> Iterator[None]:
    yield
    cores.take_slot(None)


def test_without_a_slot_or_a_cap_a_bot_is_not_pinned(slot: None) -> None:
    assert cores.own_cores(1.0, [0, 1]) is None  # not a pool worker
    cores.take_slot(0)
    assert cores.own_cores(None, [0, 1]) is None  # no CPU cap: it may use them all
    assert cores.own_cores(1.0, [0]) is None  # one core: nothing to keep apart
    assert cores.own_cores(2.0, [0, 1, 2]) is None  # room for one such bot only


def test_slots_take_turns_over_the_allowed_cores(slot: None) -> None:
    found = []
    for n in range(5):
        cores.take_slot(n)
        found.append(cores.own_cores(1.0, [0, 1]))
    assert found == [(0,), (1,), (0,), (1,), (0,)]
    cores.take_slot(1)
    assert cores.own_cores(1.5, [2, 3, 5, 7]) == (5, 7)  # a cap of 1.5 CPUs needs two cores
    assert cores.cpu_list((0, 2, 3)) == "0,2,3"


@given(st.lists(st.integers(0, 255), min_size=1, max_size=16, unique=True),
       st.floats(0.01, 8.0), st.integers(0, 63), st.integers(0, 63))
def test_a_slots_cores_are_allowed_and_as_many_as_its_cap_and_other_slots_share_none(
        allowed: list[int], cpus: float, first: int, second: int) -> None:
    try:
        cores.take_slot(first)
        mine = cores.own_cores(cpus, sorted(allowed))
        cores.take_slot(second)
        theirs = cores.own_cores(cpus, sorted(allowed))
    finally:
        cores.take_slot(None)
    slots = len(allowed) // math.ceil(cpus)
    if slots < 2:
        assert mine is None and theirs is None
        return
    assert mine is not None and theirs is not None
    assert set(mine) <= set(allowed) and len(mine) == math.ceil(cpus)
    if first % slots != second % slots:
        assert not set(mine) & set(theirs)
    else:
        assert mine == theirs


def _cores_once_both_run(folder: str) -> tuple[int, tuple[int, ...] | None]:
    """In a worker: mark it busy, wait until two workers are (so two tasks land on two), then
    tell the cores its lock-step bots would get of two."""
    Path(folder, str(os.getpid())).touch()
    assert poll_until(lambda: len(os.listdir(folder)) >= 2, 30.0, 0.005)
    return os.getpid(), cores.own_cores(1.0, [0, 1])


def _slots_of_two_workers(executor: cf.Executor, folder: str) -> tuple[int, list[tuple[int, ...]]]:
    """How many workers ran a task each of two, and the cores (of two) each would pin to; stops ``executor``."""
    try:
        found = [future.result(timeout=60) for future in
                 [executor.submit(_cores_once_both_run, folder) for _ in range(2)]]
    finally:
        executor.shutdown()
    return len({pid for pid, _ in found}), sorted(pinned or () for _, pinned in found)


def test_the_workers_of_a_local_pool_take_slots_of_their_own(tmp_path: Path) -> None:
    assert _slots_of_two_workers(local_executor(2), str(tmp_path)) == (2, [(0,), (1,)])


def test_the_workers_of_a_ladder_pool_take_slots_of_their_own(tmp_path: Path) -> None:
    # In a process of its own: the pool's fork server outlives the pool, as it should in a server.
    script = ("from arena.server.ladder import local_pool\n"
              "from tests.arena.test_cores import _slots_of_two_workers\n"
              f"print(_slots_of_two_workers(local_pool(2), {str(tmp_path)!r}))\n")
    ran = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert ran.stdout.strip() == "(2, [(0,), (1,)])", ran.stderr
