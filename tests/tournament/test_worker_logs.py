"""What a worker logs while it exits reaches the run's log: its bots' ends included.

A worker ends its bots in a finalizer at exit, and each bot, frozen between requests and so
still running, is logged as killed. That finalizer must run while the worker's log queue still
forwards records: a record queued after the queue's own close finalizer is lost, and the
parent then waits for it at exit (5 s) in vain.

Needs control groups (frozen bots) and bubblewrap, like every sandboxed run here.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.integration, pytest.mark.requires("cgroups", "bubblewrap")]


def test_every_bot_a_worker_ends_at_exit_is_in_the_run_log(tmp_path: Path) -> None:
    out = tmp_path / "out"
    bots = [f"random{i}={ROOT / 'bots/random'}" for i in range(3)]
    subprocess.run([sys.executable, "-m", "arena.cli", "run", "--bots", *bots, "--pairs", "1", "--public-deals",
                    "--concurrency", "2", "--out", str(out), "--quiet", "--allow-unvalidated"],
                   cwd=tmp_path, check=True, stdout=subprocess.DEVNULL, timeout=120)
    log = (out / "arena.log").read_text(encoding="utf-8")
    started = re.findall(r"started bot random 1\.0 pid=(\d+)", log)
    killed = re.findall(r"killing bot random pid=(\d+)", log)
    assert started
    assert sorted(killed) == sorted(started)
