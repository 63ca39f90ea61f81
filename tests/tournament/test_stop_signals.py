"""Stopping a running tournament: SIGTERM is a first Ctrl-C, and a second signal discards the
pairs in flight at once; either way the store holds only whole pairs and no process is left.

The pairs here are slow on purpose: ``faulty-slow`` sleeps through its whole time limit (30 s)
on its first decision of every game, so a pair in flight cannot finish while the test signals.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from tests.polling import poll_until
from tests.tournament.test_e2e import ARENA, ROOT, processes_mentioning, rows, write_tournament

pytestmark = pytest.mark.e2e

SLOW = ["bots/random", "bots/faulty/slow"]
SLOW_CLOCK = 'max_games = 1\n[time_control]\ntime_limit_ms = 30000\nbank_ms = 0'


def start(tmp_path: Path, name: str) -> tuple[subprocess.Popen[str], Path]:
    out = tmp_path / name
    config = write_tournament(tmp_path, out, bots=SLOW, pairs=4, seed=8, extra=SLOW_CLOCK)
    runner = subprocess.Popen([*ARENA, "run", str(config), "--quiet"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    return runner, out


def log_says(out: Path, text: str) -> bool:
    log = out / "arena.log"
    return log.exists() and text in log.read_text(encoding="utf-8", errors="replace")


def assert_only_whole_pairs_and_nothing_left(out: Path) -> int:
    db = out / "arena.sqlite"
    stored = rows(db, "SELECT count(*) FROM pairs WHERE finished_at IS NOT NULL")[0][0]
    assert rows(db, "SELECT count(*) FROM matches")[0][0] == 2 * stored
    assert poll_until(lambda: not processes_mentioning(str(out)), 20, 0.05), "the run left processes behind"
    return int(stored)


def test_sigterm_finishes_the_pairs_in_flight_like_a_first_ctrl_c(tmp_path: Path) -> None:
    runner, out = start(tmp_path, "termed")
    try:
        assert poll_until(lambda: processes_mentioning(str(ROOT / "bots" / "faulty" / "slow")), 60, 0.05)
        runner.send_signal(signal.SIGTERM)
        assert poll_until(lambda: log_says(out, "interrupted: finishing"), 30, 0.05), "SIGTERM was not a stop"
        runner.send_signal(signal.SIGTERM)  # the second one discards what the first let finish
        _, stderr = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 130, stderr
    assert "arena resume" in stderr and "Traceback" not in stderr
    assert log_says(out, "discarding")
    assert assert_only_whole_pairs_and_nothing_left(out) == 0


def test_a_second_ctrl_c_discards_the_pairs_in_flight_at_once(tmp_path: Path) -> None:
    runner, out = start(tmp_path, "discarded")
    try:
        assert poll_until(lambda: processes_mentioning(str(ROOT / "bots" / "faulty" / "slow")), 60, 0.05)
        runner.send_signal(signal.SIGINT)
        assert poll_until(lambda: log_says(out, "interrupted: finishing"), 30, 0.05)
        runner.send_signal(signal.SIGINT)
        # A pair in flight needs two 30 s stalls to finish: ending well inside that is the discard.
        _, stderr = runner.communicate(timeout=25)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 130, stderr
    assert log_says(out, "discarding") and "Traceback" not in stderr
    assert assert_only_whole_pairs_and_nothing_left(out) == 0
    # The discarded pairs are still to play: the schedule is whole and nothing was marked done.
    assert rows(out / "arena.sqlite", "SELECT count(*) FROM pairs WHERE finished_at IS NULL")[0][0] == 4
