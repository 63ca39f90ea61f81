"""A process killed right after launching bots takes every sandbox with it (the guard pipe).

bubblewrap arms its init's parent-death signal only after setting the sandbox up; a parent
SIGKILLed in that window used to leave the init and the bot running. The guard shell inside
each sandbox reads a pipe whose write end only the launching process holds.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest

from arena.botproc import load_manifest, start_bot

pytestmark = [pytest.mark.integration, pytest.mark.requires("bubblewrap")]

ROOT = Path(__file__).resolve().parents[2]


def _launch_then_wait(run_dir: str, endpoint: str, queue: "multiprocessing.Queue[list[int]]") -> None:
    manifest = load_manifest(ROOT / "bots/random")
    for _ in range(4):
        bot = start_bot(manifest, run_dir=Path(run_dir), endpoint=endpoint, token="t")
        queue.put(bot.sandbox_pids())
    time.sleep(120)  # killed long before this ends


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_sandboxes_die_with_a_launcher_killed_right_after_launching(tmp_path: Path) -> None:
    sockets = Path(os.path.realpath("/tmp")) / f"arena-guard-{os.getpid()}"
    sockets.mkdir(exist_ok=True)
    ctx = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue[list[int]] = ctx.Queue()
    launcher = ctx.Process(target=_launch_then_wait, args=(str(tmp_path), f"ipc://{sockets}/x.sock", queue))
    launcher.start()
    pids = [pid for _ in range(4) for pid in queue.get(timeout=60)]
    os.kill(launcher.pid, signal.SIGKILL)  # at once: the last sandbox is still being set up
    launcher.join(10)
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [pid for pid in pids if _alive(pid)] == []
    sockets.rmdir()
