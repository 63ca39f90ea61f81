"""Fixtures for the arena tests: short ipc folders, bot fixtures, and a leak guard."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.botproc import procfs

BOTFIXTURES = Path(__file__).parent / "botfixtures"


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    """A short folder for ipc:// sockets (paths must stay <= 107 characters)."""
    path = Path(tempfile.mkdtemp(prefix="arena-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def marker() -> str:
    """A unique word to pass on a bot's command line and find its processes by."""
    return f"arena-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture(autouse=True)
def no_leftover_children() -> Iterator[None]:
    """Fail a test that leaves a child process of ours running or unreaped (zombie)."""
    before = set(procfs.descendants(os.getpid()))
    yield
    left = [pid for pid in procfs.descendants(os.getpid()) if pid not in before]
    assert not left, f"test left child processes behind: {left}"
