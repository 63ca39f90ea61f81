"""The new processes a match needs start together, and each still answers for itself alone.

``SessionPool.seat`` launches both seats' processes before either handshake; the conductor
that plays the match greets them in its poll loop (``acquire`` greets at once). Every bot
keeps its own handshake deadline, a bot that fails its handshake is the session its seat gets
(no replacement is started behind its back), and the other seat's bot is welcomed as if it had
started alone. A pool that a finalizer closes at interpreter exit still stops its bots.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.botproc import load_manifest
from arena.clock import TimeControl
from arena.conductor import play_matches
from arena.engine.records import FaultKind
from arena.matchplay import MatchSettings, SessionPool, play_match
from arena.referee import Referee
from arena.session import SessionState, greet

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
RANDOM = load_manifest(REPO / "bots" / "random")
SLOWHELLO = load_manifest(REPO / "bots" / "faulty" / "slowhello")


def test_both_seats_start_before_either_handshake(tmp_path: Path) -> None:
    with SessionPool(tmp_path, MatchSettings(max_games=4)) as pool:
        first, second = pool.seat((RANDOM, RANDOM), "pair-0")
        assert first is not second and first.process is not None and second.process is not None
        assert first.state is second.state is SessionState.STARTING
        greet([first, second])
        assert first.alive and second.alive and first.max_games == second.max_games == 4
        # room on both: the next match of another pair starts nothing
        assert set(pool.seat((RANDOM, RANDOM), "pair-1")) == {first, second}
        assert len(pool.idle) == 2


def test_a_starting_session_has_no_room_until_its_hello(tmp_path: Path) -> None:
    with SessionPool(tmp_path, MatchSettings(max_games=4)) as pool:
        first, second = pool.seat((RANDOM, RANDOM), "pair-0")
        third, fourth = pool.seat((RANDOM, RANDOM), "pair-1")  # its grant is not known yet: new processes
        assert len({first, second, third, fourth}) == 4 and all(s.starting for s in (third, fourth))


def test_a_bot_silent_at_its_handshake_costs_only_itself(tmp_path: Path) -> None:
    settings = MatchSettings(time_control=TimeControl(handshake_ms=1500))
    with SessionPool(tmp_path, settings) as pool:
        silent, good = pool.seat((SLOWHELLO, RANDOM), "pair-0")
        referee = Referee("silent", 3, settings.rules, ("slowhello", "random"), settings.time_control, settings.policy)
        outcome = play_matches([(referee, (silent, good))])[0]
        assert silent.state is SessionState.DEAD and silent.death is not None
        assert [(f.kind, f.seat) for f in outcome.faults] == [(FaultKind.TIMEOUT, 0)]
        assert "handshake" in outcome.faults[0].detail and outcome.forfeit and outcome.winner == 1
        assert good.alive and good.death is None
        assert len(pool.idle) == 2  # the dead session is the one its seat got: no second process started


def test_a_match_greets_the_processes_started_for_it(tmp_path: Path) -> None:
    with SessionPool(tmp_path, MatchSettings(max_games=3)) as pool:
        outcome = play_match(pool, (RANDOM, RANDOM), "together", 7, pair_key="pair-0")
        assert not outcome.faults and not outcome.void
        assert len(pool.idle) == 2 and all(s.alive and s.max_games == 3 and s.load == 0 for s in pool.idle)


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
