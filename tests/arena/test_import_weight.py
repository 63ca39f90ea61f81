"""Loading a tournament file stays light: no compliance suite, no ZeroMQ.

A fresh interpreter is the only honest place to look at ``sys.modules``: the test process
itself has imported everything long before.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("zmq", "arena.validation", "arena.session", "arena.conductor", "arena.matchplay", "arena.submission")


def loaded_after(statement: str) -> set[str]:
    """The HEAVY modules a fresh interpreter holds after running ``statement``."""
    probe = f"{statement}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_reading_a_tournament_file_imports_neither_the_suite_nor_zmq(tmp_path: Path) -> None:
    bots = "".join(f'[[bots]]\npath = "{REPO / "bots" / name}"\n' for name in ("random", "greedy"))
    (tmp_path / "t.toml").write_text(f'name = "t"\nallow_unvalidated = true\n{bots}', encoding="utf-8")
    assert loaded_after("import arena.tournament, arena.registry") == set()
    assert loaded_after(f"from arena.tournament import load_config\nload_config({str(tmp_path / 't.toml')!r})") == set()


def test_the_probe_sees_what_submitting_imports() -> None:
    # The same probe finds the heavy modules where they belong, so the empty sets above mean something.
    assert {"zmq", "arena.validation", "arena.submission"} <= loaded_after("import arena.submission")
