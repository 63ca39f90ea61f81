"""Nothing of a bot survives its arena: SIGKILL at random moments of bot launches, and a
crash that leaves something anyway is cleaned up by the next run on the same folder.

Skipped where the arena cannot make control groups (root and cgroup v1 or v2 controllers)
or bubblewrap is missing: the guarantees below are those of the groups and the sandbox.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.botproc import cgroups, procfs
from arena.botproc.cgroups import RUNS_FOLDER, hierarchy

from tests.polling import poll_until

ROOT = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-m", "arena.cli"]
pytestmark = [pytest.mark.integration, pytest.mark.requires("cgroups", "bubblewrap")]
KILLS = 20


def wait_until(condition: Callable[[], object], timeout: float) -> object:
    return poll_until(condition, timeout, 0.02)


def tournament(folder: Path, out: Path, pairs: int) -> Path:
    lines = ['name = "launches"', "seed = 5", f"pairs_per_pairing = {pairs}", "concurrency = 2",
             "allow_unvalidated = true", f'output = "{out}"']
    for i in range(2):
        lines += ["[[bots]]", f'path = "{ROOT / "bots/random"}"', f'name = "random-{i}"']
    path = folder / f"{out.name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def frozen_groups(hier: cgroups.Hierarchy, run_id: str) -> list[str]:
    """The run's bot groups frozen now (not the run's empty FREEZER_ANCHOR); one being made may
    not be in every hierarchy yet."""
    found = []
    for group in hier.children(run_id):
        if group == cgroups.FREEZER_ANCHOR:
            continue
        try:
            if hier.is_frozen(f"{run_id}/{group}"):
                found.append(group)
        except FileNotFoundError:  # listed from another hierarchy, its freezer folder not made yet
            continue
    return found


def run_ids(out: Path) -> list[str]:
    folder = out / "bots" / RUNS_FOLDER
    return sorted(p.stem for p in folder.glob("*.jsonl")) if folder.is_dir() else []


def leftovers(out: Path, run_id: str, *, by_cmdline: bool = True) -> dict[str, list[int]]:
    """Every trace of a run still alive: in its groups, marked with its id, or naming OUT
    (``by_cmdline``: only while no other run uses OUT)."""
    hier = hierarchy()
    assert hier is not None
    found = {
        "cgroup": sorted(hier.pids(run_id)),
        "marker": sorted(procfs.env_processes(cgroups.ENV_RUN, run_id)),
        "cmdline": sorted(procfs.find_processes(str(out))) if by_cmdline else [],
    }
    return {k: v for k, v in found.items() if v}


def test_sigkill_at_random_moments_of_bot_launches_leaves_no_process(tmp_path: Path) -> None:
    rng = random.Random(12)
    problems = []
    for i in range(KILLS):
        out = tmp_path / f"out{i}"
        arena = subprocess.Popen([*ARENA, "run", str(tournament(tmp_path, out, pairs=40)), "--fresh", "--quiet"],
                                 cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert wait_until(lambda: run_ids(out), 60), "no bot was launched"
            time.sleep(rng.uniform(0.0, 0.8))  # a seeded moment among the launches (--fresh: every match)
        finally:
            arena.send_signal(signal.SIGKILL)
            arena.wait(10)
        run_id = run_ids(out)[0]
        left = wait_until(lambda: not leftovers(out, run_id), 15) or leftovers(out, run_id)
        if left is not True:
            problems.append((i, left))
            cgroups.end_run(run_id)  # keep the machine tidy for the other tests
    assert problems == []


def test_the_next_run_ends_what_a_crashed_run_left(tmp_path: Path) -> None:
    out = tmp_path / "out"
    spec = tournament(tmp_path, out, pairs=40)
    arena = subprocess.Popen([*ARENA, "run", str(spec), "--quiet"], cwd=tmp_path,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: run_ids(out), 60), "no bot was launched"
        run_id = run_ids(out)[0]
        hier = hierarchy()
        assert hier is not None
        assert wait_until(lambda: frozen_groups(hier, run_id), 60)  # a bot waits between requests: nothing in it can act
        for watchdog in procfs.find_processes(run_id):  # a crash of everything: no watchdog either
            os.kill(watchdog, signal.SIGKILL)
    finally:
        arena.send_signal(signal.SIGKILL)
        arena.wait(10)
    try:
        time.sleep(1.0)  # long enough for anything that would end by itself
        assert leftovers(out, run_id), "nothing was left behind to clean up"  # idle bots are frozen
        resumed = subprocess.Popen([*ARENA, "resume", str(out), "--quiet"], cwd=tmp_path,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert wait_until(lambda: len(run_ids(out)) == 1 and run_ids(out)[0] != run_id, 60)
            gone = lambda: not leftovers(out, run_id, by_cmdline=False)  # noqa: E731
            assert wait_until(gone, 10), leftovers(out, run_id, by_cmdline=False)
        finally:
            resumed.send_signal(signal.SIGKILL)  # its own watchdog ends its bots
            resumed.wait(10)
        assert "left behind by an earlier run" in (out / "arena.log").read_text()
    finally:
        for rid in {run_id, *run_ids(out)}:
            cgroups.end_run(rid)
