"""What some tests need from the machine, and the one way they skip without it.

A test that needs a system package or a kernel feature says so with
``@pytest.mark.requires("bubblewrap")`` (several names may be given), or calls
``require("root")`` in a fixture. Without the thing the test is skipped with a reason that names
what to install; ``pytest -ra`` lists the reasons. ``ARENA_TESTS_REQUIRE`` (a comma-separated
list of names, or ``all``) turns those skips into failures: ``.ci/run`` sets it for what it
installs, so CI never skips a test silently.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

STRICT_ENV = "ARENA_TESTS_REQUIRE"

_ZMQ_PROGRAM = b"""#include <zmq.h>
int main(void) { int major, minor, patch; zmq_version(&major, &minor, &patch); return ZMQ_DEALER == 5 ? 0 : 1; }
"""


@dataclass(frozen=True, slots=True)
class Requirement:
    """Something a test needs: how to detect it and how to install it."""

    name: str
    needs: str
    install: str
    probe: Callable[[], str | None]  # None when present, else why it is missing

    def missing(self) -> str | None:
        """Why the requirement is not met here, or None (probed once per test run)."""
        return _probe(self.name)

    def reason(self, why: str) -> str:
        return f"needs {self.needs} ({why}); install: {self.install}"

    def check(self) -> None:
        """Skip the running test (fail it under ``ARENA_TESTS_REQUIRE``) when missing."""
        why = self.missing()
        if why is None:
            return
        if self.name in strict_names():
            pytest.fail(f"{STRICT_ENV} demands it: {self.reason(why)}", pytrace=False)
        pytest.skip(self.reason(why))


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _bubblewrap() -> str | None:
    from arena.botproc import bwrap_status

    path, reason = bwrap_status()
    return None if path else reason


def _chromium() -> str | None:
    for name in ("chromium", "chromedriver"):
        if not _executable(f"/usr/bin/{name}"):
            return f"/usr/bin/{name} is missing"
    return None


def _c_toolchain() -> str | None:
    """A C compiler, make, and libzmq's header and library: compile and link a small program."""
    for tool in ("cc", "make"):
        if shutil.which(tool) is None:
            return f"no {tool} on PATH"
    with tempfile.TemporaryDirectory(prefix="arena-cc-") as tmp:
        done = subprocess.run(["cc", "-x", "c", "-", "-o", str(Path(tmp) / "probe"), "-lzmq"],
                              input=_ZMQ_PROGRAM, capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        error = next((line for line in lines if "error" in line), lines[0] if lines else "")
        return "cannot compile and link against libzmq" + (f": {error.strip()}" if error else "")
    return None


def _root() -> str | None:
    """Root, checked by what the tests do with it: writing where only root may (``/opt``)."""
    if os.geteuid() != 0:
        return "not running as root"
    return None if os.access("/opt", os.W_OK) else "/opt is not writable"


def _tmpfs() -> str | None:
    """Root, mount(8), and a kernel that lets us mount a tmpfs: try one."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return "mounting needs root and mount(8)"
    with tempfile.TemporaryDirectory(prefix="arena-tmpfs-") as where:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", where],
                              capture_output=True, text=True, timeout=30, check=False)
        if done.returncode == 0:
            subprocess.run(["umount", where], capture_output=True, timeout=30, check=False)
    return None if done.returncode == 0 else f"mount -t tmpfs failed: {done.stderr.strip()}"


def _cgroups() -> str | None:
    """Control groups the arena can make, freeze and limit (what arena.botproc.cgroups detects)."""
    from arena.botproc.cgroups import detect

    hier, reason = detect()
    return None if hier is not None else reason


REQUIREMENTS: dict[str, Requirement] = {r.name: r for r in (
    Requirement("bubblewrap", "bubblewrap (bwrap) able to make a sandbox here", "apt-get install bubblewrap",
                _bubblewrap),
    Requirement("chromium", "headless Chromium and chromedriver", "apt-get install chromium chromium-driver",
                _chromium),
    Requirement("c-toolchain", "a C compiler, make and libzmq's headers", "apt-get install build-essential libzmq3-dev",
                _c_toolchain),
    Requirement("root", "root (a writable /opt, other users)", "run the tests as root, e.g. in a container", _root),
    Requirement("cgroups", "root and writable control groups (v1: cpu, cpuacct, memory, pids, freezer; "
                "v2: cpu, memory, pids delegated)",
                "run the tests as root where /sys/fs/cgroup is writable (a VM, or a container with its own "
                "cgroup namespace and --privileged)", _cgroups),
    Requirement("tmpfs", "root and tmpfs mounts", "run the tests as root with util-linux (apt-get install util-linux)",
                _tmpfs),
)}


@functools.cache
def _probe(name: str) -> str | None:
    return REQUIREMENTS[name].probe()


def strict_names() -> set[str]:
    """The requirements ``ARENA_TESTS_REQUIRE`` makes compulsory."""
    names = {n.strip() for n in os.environ.get(STRICT_ENV, "").split(",") if n.strip()}
    return set(REQUIREMENTS) if "all" in names else names


def require(*names: str) -> None:
    """Skip (or, under ``ARENA_TESTS_REQUIRE``, fail) the running test unless all ``names`` are met."""
    for name in names:
        if name not in REQUIREMENTS:
            raise KeyError(f"unknown requirement {name!r}; known: {', '.join(REQUIREMENTS)}")
        REQUIREMENTS[name].check()


def have(name: str) -> bool:
    """Whether the requirement is met here (for a test that checks the fallback instead)."""
    return REQUIREMENTS[name].missing() is None
