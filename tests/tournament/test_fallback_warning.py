"""Without bubblewrap, ``arena run`` warns once per command, not once per worker process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
WARNING = "WITHOUT a sandbox"


def path_without_bwrap(folder: Path) -> str:
    """A PATH holding only the tools the fallback sandbox uses (so ``bwrap`` is not found)."""
    folder.mkdir()
    for tool in ("prlimit", "setpriv"):
        found = shutil.which(tool)
        if found:
            (folder / tool).symlink_to(found)
    return str(folder)


def test_a_two_worker_run_without_bubblewrap_warns_once(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": path_without_bwrap(tmp_path / "bin")}
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "run", "--bots", "r1=bots/random", "r2=bots/random", "r3=bots/random",
         "--pairs", "1", "--concurrency", "2", "--allow-unvalidated", "--quiet", "--out", str(tmp_path / "out")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    assert output.count(WARNING) == 1, output
    assert "apt-get install bubblewrap" in output
