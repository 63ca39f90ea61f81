"""A full bot-log volume (the harness's disk) never charges a bot and never voids a match: the
arena writes the bots' logs itself, sees ENOSPC, drops the rest of the log and keeps draining the
bot's pipe, so the bot's play never notices and its result stands. (A void would be a free replay
for a losing bot that fills the volume itself: ``bots/hostile/voidloss``.)

Needs root and tmpfs mounts: the bot-log folder ``OUT/bots`` is a small tmpfs, filled up.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.botproc import logsink
from tests.tmpfs import mounted_tmpfs

ROOT = Path(__file__).resolve().parents[2]
CHATTY = ROOT / "tests/arena/botfixtures/chatty"
pytestmark = [pytest.mark.integration, pytest.mark.requires("tmpfs")]


def fill(folder: Path) -> None:
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:  # ENOSPC: full
        pass
    finally:
        os.close(fd)


def test_a_full_bot_log_volume_charges_no_bot_and_voids_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    logs = out / "bots"
    logs.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(logs)], check=True, timeout=30)
    try:
        fill(logs)
        spec = tmp_path / "t.toml"
        spec.write_text("\n".join([
            'name = "full"', "seed = 3", "pairs_per_pairing = 1", "concurrency = 1", "allow_unvalidated = true",
            f'output = "{out}"', "[[bots]]", f'path = "{CHATTY}"', "[[bots]]", f'path = "{ROOT / "bots/random"}"',
        ]) + "\n")
        done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(spec), "--quiet"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        with sqlite3.connect(f"file:{out / 'arena.sqlite'}?mode=ro", uri=True) as db:
            faults = db.execute("SELECT kind, detail FROM faults").fetchall()
            matches = db.execute("SELECT count(*), sum(void), count(winner_seat) FROM matches").fetchone()
            pairs = db.execute("SELECT count(*), sum(attempts) FROM pairs WHERE finished_at IS NOT NULL").fetchone()
        assert faults == []  # nobody charged, not even a crash; no harness fault either
        assert matches == (2, 0, 2) and pairs == (1, 1)  # both halves played out once and stored
        arena_log = (out / "arena.log").read_text()
        assert "cannot write bot log" in arena_log and "No space left on device" in arena_log
    finally:
        subprocess.run(["umount", "-l", str(logs)], check=False, timeout=30)


VOIDLOSS = ROOT / "bots/hostile/voidloss"


@dataclass
class VoidLossRun:
    """What a run of ``voidloss`` against ``greedy`` (2 pairs) stored and logged."""

    rows: list[tuple[int, int, int | None, int]]  # seat0, seat1, winner_seat, void of each match
    lost: int  # matches greedy won against voidloss that stand
    faults: list[tuple[str, str]]
    attempts: int
    arena_log: str


def run_voidloss(tmp_path: Path, out: Path, pairs: int = 2) -> VoidLossRun:
    """``voidloss`` against ``greedy``, ``pairs`` pairs one at a time, results in ``out``; the run must finish."""
    spec = tmp_path / "t.toml"
    spec.write_text("\n".join([
        'name = "voidloss"', "seed = 5", 'deals = "public"', f"pairs_per_pairing = {pairs}", "concurrency = 1",
        "allow_unvalidated = true", f'output = "{out}"',
        "[[bots]]", f'path = "{VOIDLOSS}"', 'name = "voidloss"',
        "[[bots]]", f'path = "{ROOT / "bots/greedy"}"', 'name = "greedy"',
    ]) + "\n")
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(spec), "--quiet"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(f"file:{out / 'arena.sqlite'}?mode=ro", uri=True) as db:
        entrant = {label: e for e, label in db.execute("SELECT entrant, label FROM entrants")}
        rows = db.execute("SELECT seat0, seat1, winner_seat, void FROM matches").fetchall()
        faults = db.execute("SELECT kind, detail FROM faults").fetchall()
        attempts = db.execute("SELECT sum(attempts) FROM pairs").fetchone()[0]
    lost = sum(1 for s0, s1, w, v in rows if not v and w is not None and (s0, s1)[w] == entrant["greedy"])
    run = VoidLossRun(rows, lost, faults, attempts, (out / "arena.log").read_text())
    print(f"voidloss: {len(rows)} matches stored, {sum(v for *_, v in rows)} void, {lost} lost by voidloss "
          f"standing; faults {faults}; pair attempts {attempts}")
    return run


def test_a_bot_cannot_void_its_losses_by_filling_the_log_volume(tmp_path: Path) -> None:
    """``voidloss`` floods its stderr whenever it is behind: its first flood fills the (small,
    empty) bot-log volume, and any later line fails to be copied. Its output is lost, but a bot's
    log is no part of its play: the matches it loses stand, and nobody is charged or replayed."""
    out = tmp_path / "out"
    with mounted_tmpfs(out / "bots", "1m"):
        run = run_voidloss(tmp_path, out)
    assert "cannot write bot log" in run.arena_log and "No space left on device" in run.arena_log  # it did fill it
    assert len(run.rows) == 4 and not any(v for *_, v in run.rows), run.rows  # a full log volume voids nothing
    assert run.lost >= 1, run.rows  # the losses it tried to erase stand (it falls behind in them)
    assert run.faults == []  # nobody is charged: not the flooder (its own output is its business), nor its opponent
    assert run.attempts == 2  # each pair played once


def test_a_bot_cannot_stop_a_run_by_filling_the_disk_under_its_database(tmp_path: Path) -> None:
    """The bots' logs share the output folder's disk, a 40 MiB tmpfs: ``voidloss``'s 32 MiB flood,
    the first time it is behind, left less than the runner keeps free for the results, so the
    runner stopped before the next pair, until an operator freed space. Bot logs now leave 64 MiB
    free on that disk: here every log is dropped, and all 6 pairs are played and stored."""
    with mounted_tmpfs(tmp_path / "disk", "40m") as disk:
        run = run_voidloss(tmp_path, disk / "out", pairs=6)
        told = int((disk / "out" / "bots" / logsink.LEDGER_FOLDER / logsink.RESERVE_FILE).read_text())
    assert told >= 16 << 20  # the runner told the log streams what the results need (16 MiB and the pairs')
    assert "dropped at" in run.arena_log and "leave 64 MiB for the results" in run.arena_log
    assert len(run.rows) == 12 and not any(v for *_, v in run.rows), run.rows
    assert run.lost >= 1 and run.faults == [] and run.attempts == 6


def test_bot_logs_leave_what_the_runner_says_the_results_need(tmp_path: Path) -> None:
    """On the output folder's disk the logs leave 64 MiB free, or more once the runner says the
    results need more (many pairs in flight on many cores): its need and 16 MiB."""
    run_dir = tmp_path / "out" / "bots"
    run_dir.mkdir(parents=True)
    budget = logsink.LogBudget(run_dir, "bot-1", 1 << 20)
    assert budget.shares_results_disk and budget.keep_free() == 64 << 20
    logsink.reserve_for_results(run_dir, 100 << 20)
    assert budget.keep_free() == 116 << 20
    logsink.reserve_for_results(run_dir, 1 << 20)
    assert budget.keep_free() == 64 << 20
