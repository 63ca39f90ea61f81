"""Stopping a local pool ends even when a worker can never exit by itself.

A worker SIGKILLed while it waits for work can die holding the pool's call-queue lock; its
siblings then never read the word to stop, and ``ProcessPoolExecutor.shutdown(wait=True)``
waits for ever. These tests make a worker die as the pool stops (exit code 3 from its exit
handlers, so after the stop word was sent) and its sibling unable to exit, with real processes.
"""

from __future__ import annotations

import logging
import multiprocessing.util
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from arena import runner
from arena.runner import local_executor, shutdown_executor

from tests.polling import poll_until


def _both_running(folder: str) -> list[int]:
    """Wait until both workers run a task; the pids of both, the lower first."""
    Path(folder, str(os.getpid())).touch()
    assert poll_until(lambda: len(os.listdir(folder)) >= 2, 30.0, 0.005)
    return sorted(int(name) for name in os.listdir(folder))


def _never_exit() -> None:
    threading.Thread(target=threading.Event().wait).start()  # not a daemon: the process cannot end


def _die_as_the_pool_stops_or_never_exit(folder: str) -> int:
    first, _ = _both_running(folder)
    if os.getpid() == first:
        multiprocessing.util.Finalize(None, os._exit, args=(3,), exitpriority=100)
    else:
        _never_exit()
    return os.getpid()


def _never_exit_once_both_run(folder: str) -> int:
    _both_running(folder)
    _never_exit()
    return os.getpid()


def _stop_pool_running(task: Callable[[str], int], folder: Path) -> tuple[list[int], bool]:
    """Run ``task`` on both workers, stop the pool; its pids, and whether the stop returned."""
    executor = local_executor(2)
    pids = sorted(future.result(timeout=60) for future in [executor.submit(task, str(folder)) for _ in range(2)])
    stopping = threading.Thread(target=shutdown_executor, args=(executor,), kwargs={"discard": False}, daemon=True)
    stopping.start()
    stopping.join(120)
    if stopping.is_alive():
        for pid in pids:
            _kill(pid)
    return pids, not stopping.is_alive()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")


def test_a_worker_dying_as_the_pool_stops_does_not_hang_the_stop(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="arena.runner"):
        pids, stopped = _stop_pool_running(_die_as_the_pool_stops_or_never_exit, tmp_path)
    assert stopped, "shutdown_executor waited for ever on a worker stuck behind a dead one"
    assert all(_gone(pid) for pid in pids)
    died = [r.getMessage() for r in caplog.records if "died (exit [3]) as the pool stopped" in r.getMessage()]
    assert died and str(pids[0]) in died[0] and str(pids[1]) in died[0]


def test_a_worker_that_never_exits_is_killed_after_the_grace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(runner, "WORKER_EXIT_GRACE", 1.0)
    with caplog.at_level(logging.WARNING, logger="arena.runner"):
        pids, stopped = _stop_pool_running(_never_exit_once_both_run, tmp_path)
    assert stopped and all(_gone(pid) for pid in pids)
    assert any("had not exited 1 s after the pool stopped" in r.getMessage() for r in caplog.records)
