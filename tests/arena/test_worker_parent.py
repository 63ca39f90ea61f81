"""A pool worker dies with the process that made the pool, even when that process is killed
while the worker is still starting (``runner.worker_init``), with real forked processes.

The worker used to read its parent's pid only after taking its slot and its core; a parent
SIGKILLed meanwhile left it reparented to init, reading init's pid as its parent's, and it then
waited on its own task queue forever (twice in CI, a killed ``arena resume``'s worker)."""

from __future__ import annotations

import multiprocessing
import os

from arena.runner import worker_init


def _start_worker(parent: int) -> None:
    worker_init(parent=parent)
    os._exit(0)  # it lived through its start


def _exit_code_of_a_worker_told_its_parent_is(parent: int) -> int | None:
    child = multiprocessing.get_context("fork").Process(target=_start_worker, args=(parent,))
    child.start()
    child.join(30)
    return child.exitcode


def test_a_worker_whose_pool_maker_is_gone_when_it_starts_exits_at_once() -> None:
    gone = multiprocessing.get_context("fork").Process(target=os._exit, args=(0,))
    gone.start()
    gone.join(30)  # a pid that is nobody's parent now: the pool's maker, killed as its worker starts
    assert _exit_code_of_a_worker_told_its_parent_is(gone.pid or 0) == 1


def test_a_worker_whose_pool_maker_lives_starts() -> None:
    assert _exit_code_of_a_worker_told_its_parent_is(os.getpid()) == 0
