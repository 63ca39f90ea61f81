"""CPU affinity: a local pool's workers, with the bots they start, keep to their own CPUs.

``cpu_sets`` splits the CPUs among the workers; a real ``arena run`` with two workers then has
each bot process on one CPU (its worker's), the two workers' bots on different ones, and
``--no-affinity`` leaves every process free to use them all.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.affinity import cpu_sets, usable_cpus

REPO = Path(__file__).resolve().parents[2]
CPUS_BOT = REPO / "tests" / "arena" / "botfixtures" / "cpus"


@given(workers=st.integers(1, 64), cpus=st.sets(st.integers(0, 127), min_size=1, max_size=64))
def test_every_worker_gets_cpus_and_every_cpu_is_used(workers: int, cpus: set[int]) -> None:
    sets = cpu_sets(workers, sorted(cpus))
    assert len(sets) == workers
    assert all(s and s <= cpus for s in sets)
    if workers <= len(cpus):  # disjoint sets that cover the CPUs, as even as can be
        assert sum(len(s) for s in sets) == len(cpus) and frozenset().union(*sets) == cpus
        assert max(map(len, sets)) - min(map(len, sets)) <= 1
    else:  # one CPU each, round robin: no CPU carries two workers more than another
        assert all(len(s) == 1 for s in sets) and frozenset().union(*sets) == cpus
        loads = [sum(1 for s in sets if cpu in s) for cpu in cpus]
        assert max(loads) - min(loads) <= 1


def test_no_workers_or_no_cpus_is_an_error() -> None:
    with pytest.raises(ValueError):
        cpu_sets(0, [0])
    with pytest.raises(ValueError):
        cpu_sets(1, [])


def _bots_cpus(tmp_path: Path, *flags: str) -> list[list[int]]:
    """Play a small tournament of the ``cpus`` bot with two workers; each bot process's CPUs."""
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "arena.cli", "run", "--bots", f"a={CPUS_BOT}", f"b={CPUS_BOT}",
                    "--pairs", "8", "--concurrency", "2", "--public-deals", "--seed", "3", "--out", str(out),
                    "--quiet", "--allow-unvalidated", *flags], check=True, cwd=REPO, capture_output=True, timeout=120)
    found = []
    for log in sorted((out / "bots").glob("*/stderr.log")):
        match = re.search(r"cpus=\[([\d, ]*)\]", log.read_text())
        assert match, f"{log} does not say its CPUs"
        found.append([int(c) for c in match.group(1).split(",")])
    assert found, "no bot process was started"
    return found


@pytest.mark.integration
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(usable_cpus()) < 2,
                    reason="needs Linux CPU affinity and two CPUs (run on a machine with 2 cores or more)")
def test_each_workers_bots_keep_to_its_cpu_and_no_affinity_frees_them(tmp_path: Path) -> None:
    pinned = {tuple(cpus) for cpus in _bots_cpus(tmp_path / "pinned")}
    assert len(pinned) == 2, f"the bots should be on their two workers' CPUs, not {pinned}"
    first, second = (set(cpus) for cpus in pinned)
    assert not first & second and sorted(first | second) == usable_cpus()
    free = _bots_cpus(tmp_path / "free", "--no-affinity")
    assert all(cpus == usable_cpus() for cpus in free), free
