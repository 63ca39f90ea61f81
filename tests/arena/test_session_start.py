"""The new processes a match needs start together, and each still answers for itself alone.

``SessionPool.prepare`` launches both seats' processes before either handshake and greets them
in one poll loop; every bot keeps its own handshake deadline, a bot that fails its handshake is
the session its seat gets (no replacement is started behind its back), and the other seat's
bot is welcomed as if it had started alone. A pool that a finalizer closes at interpreter exit
still stops its bots.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import arena.matchplay
import arena.session
from arena.botproc import load_manifest
from arena.clock import TimeControl
from arena.engine.records import FaultKind
from arena.matchplay import MatchSettings, SessionPool
from arena.session import Launch, SessionState

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
RANDOM = load_manifest(REPO / "bots" / "random")
SLOWHELLO = load_manifest(REPO / "bots" / "faulty" / "slowhello")


@pytest.fixture
def greeted(monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[SessionState, bool]]]:
    """For each ``greet`` call of the pool: its launches' states and whether each has a process
    (a call without launches is left out)."""
    calls: list[list[tuple[SessionState, bool]]] = []
    real = arena.session.greet

    def spy(launches: Sequence[Launch], **kwargs: Any) -> None:
        if launches:
            calls.append([(launch.session.state, launch.session.process is not None) for launch in launches])
        real(launches, **kwargs)

    monkeypatch.setattr(arena.matchplay, "greet", spy)
    return calls


def test_both_seats_start_before_either_handshake(tmp_path: Path, greeted: list[list[tuple[SessionState, bool]]]) -> None:
    with SessionPool(tmp_path, MatchSettings(max_games=4)) as pool:
        pool.prepare((RANDOM, RANDOM), "pair-0")
        assert greeted == [[(SessionState.STARTING, True), (SessionState.STARTING, True)]]
        first = pool.acquire(RANDOM, "pair-0")
        second = pool.acquire(RANDOM, "pair-0", exclude=(first,))
        assert first is not second and first.alive and second.alive
        assert first.max_games == second.max_games == 4
        # room on both: the next match of another pair starts nothing
        pool.prepare((RANDOM, RANDOM), "pair-1")
        assert len(greeted) == 1 and pool.acquire(RANDOM, "pair-1") in (first, second)


def test_a_bot_silent_at_its_handshake_costs_only_itself(tmp_path: Path,
                                                          greeted: list[list[tuple[SessionState, bool]]]) -> None:
    settings = MatchSettings(time_control=TimeControl(handshake_ms=1500))
    with SessionPool(tmp_path, settings) as pool:
        pool.prepare((SLOWHELLO, RANDOM), "pair-0")
        assert len(greeted) == 1 and len(greeted[0]) == 2
        silent = pool.acquire(SLOWHELLO, "pair-0")
        good = pool.acquire(RANDOM, "pair-0", exclude=(silent,))
        assert silent.state is SessionState.DEAD and silent.death is not None
        assert silent.death.kind is FaultKind.TIMEOUT and "handshake" in silent.death.detail
        assert good.alive and good.death is None
        assert len(greeted) == 1  # the dead session is the one its seat gets: no second process started


def test_a_match_starts_its_two_processes_together(tmp_path: Path, greeted: list[list[tuple[SessionState, bool]]]) -> None:
    with SessionPool(tmp_path, MatchSettings()) as pool:
        outcome = arena.matchplay.play_match(pool, (RANDOM, RANDOM), "together", 7, pair_key="pair-0")
    assert not outcome.faults and not outcome.void
    assert greeted == [[(SessionState.STARTING, True), (SessionState.STARTING, True)]]


_CLOSED_AT_EXIT = """
import multiprocessing.util, sys
from pathlib import Path
from arena.botproc import load_manifest
from arena.matchplay import MatchSettings, SessionPool
pool = SessionPool(Path(sys.argv[1]), MatchSettings())
manifest = load_manifest(sys.argv[2])
first = pool.acquire(manifest)
second = pool.acquire(manifest, exclude=(first,))
multiprocessing.util.Finalize(pool, pool.close, exitpriority=20)  # as a runner's worker does
print(first.process.pid, second.process.pid, flush=True)
"""


def test_a_pool_closed_by_a_finalizer_at_exit_still_ends_its_bots(tmp_path: Path) -> None:
    # At interpreter exit no thread pool takes work, so the pool's bots are stopped one by one.
    done = subprocess.run([sys.executable, "-c", _CLOSED_AT_EXIT, str(tmp_path), str(Path("bots/random").resolve())],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    pids = [int(pid) for pid in done.stdout.split()]
    assert len(pids) == 2 and not any(Path(f"/proc/{pid}").exists() for pid in pids)
