"""Which cores a lock-step bot of each worker slot runs on (``arena.botproc.cores``), that the
workers of a local pool take slots of their own, and that each runs on a core of its own while
the bots it starts may run on every core."""

from __future__ import annotations

import ast
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

from arena.botproc import cores, load_manifest, start_bot
from arena.botproc.cgroups import ENV_SWITCH
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
    workers = []
    for n in range(5):
        cores.take_slot(n)
        workers.append(cores.slot_core([3, 5]))
    assert workers == [3, 5, 3, 5, 3]  # with one-CPU bots, each worker sits on its lock-step bots' core
    assert cores.slot_core([3]) is None  # one core: nothing to keep apart
    cores.take_slot(None)
    assert cores.slot_core([0, 1]) is None  # not a pool worker
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


PRINT_OWN_CORES = """name = "cores"
version = "1"
protocol = "1"
command = ["{python}", "-c", "import os; print(sorted(os.sched_getaffinity(0)))"]
"""


def _cores_of_a_worker_and_its_bot(busy: str, bot_dir: str) -> tuple[list[int], list[int]]:
    """In a worker: once two workers are busy, the cores this one runs on, and the cores a bot
    it starts may run on (the bot prints its own)."""
    Path(busy, str(os.getpid())).touch()
    assert poll_until(lambda: len(os.listdir(busy)) >= 2, 30.0, 0.005)
    run_dir = Path(bot_dir).parent / f"run-{os.getpid()}"
    with start_bot(load_manifest(bot_dir), run_dir=run_dir, sandbox="fallback") as bot:
        assert bot.wait(30) == 0, bot.stderr_tail()
        printed = bot.stdout_tail()
    return sorted(os.sched_getaffinity(0)), ast.literal_eval(printed)


def test_a_pool_worker_runs_on_a_core_of_its_own_and_its_bots_on_every_core(tmp_path: Path) -> None:
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip(f"needs 2 cores (has {len(allowed)})")
    (tmp_path / "busy").mkdir()
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "bot.toml").write_text(PRINT_OWN_CORES)
    # In a process of its own without control groups, whose cpusets would set a bot's cores
    # whatever it inherits: what is checked is what the worker's bots inherit.
    script = ("from arena.runner import local_executor\n"
              "from tests.arena.test_cores import _cores_of_a_worker_and_its_bot\n"
              "pool = local_executor(2)\n"
              f"tasks = [pool.submit(_cores_of_a_worker_and_its_bot, {str(tmp_path / 'busy')!r}, "
              f"{str(tmp_path / 'bot')!r}) for _ in range(2)]\n"
              "print(sorted(task.result(timeout=60) for task in tasks))\n"
              "pool.shutdown()\n")
    ran = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, ENV_SWITCH: "off"})
    assert ran.returncode == 0, ran.stderr
    assert ast.literal_eval(ran.stdout.strip()) == [([allowed[0]], allowed), ([allowed[1]], allowed)]
