"""Operator mistakes around a running tournament: a second run, a finished one, a broken
database, a full disk, a bot edited mid-run (real `arena` processes)."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.tmpfs import mounted_tmpfs
from tests.tournament.test_e2e import (ARENA, HANDS, MATCHES, ROOT, arena, kill_9_once_stored, processes_mentioning,
                                       rows, stored_pairs, wait_until, write_tournament)

pytestmark = pytest.mark.e2e

# Two runs deal alike only from a public seed; lock-step keeps few pairs in flight, so the
# disk is checked again while the run goes on.
PUBLIC = 'deals = "public"\nmax_games = 1'
DUMP = ("SELECT p.pair_index, p.finished_at, p.attempts, t.finished_at FROM pairs p "
        "JOIN tournaments t ON t.id = p.tournament_id ORDER BY p.pair_index")


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*ARENA, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _last_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    return stderr.strip().splitlines()[-1]


def _holds_the_lock(out: Path, process: subprocess.Popen[str]) -> bool:
    assert process.poll() is None, "the run ended before it could be checked"
    lock = out / "arena.lock"
    return lock.exists() and lock.read_text().strip() == str(process.pid)


def test_a_second_run_is_refused_at_once_naming_the_pid_and_kill_9_frees_the_folder(tmp_path: Path) -> None:
    out = tmp_path / "cup"
    # faulty-slow stalls 30 s in every game, so neither run can end while it is checked.
    tournament = write_tournament(tmp_path, out, bots=["bots/random", "bots/faulty/slow"], pairs=4,
                                  extra="max_games = 1\n[time_control]\ntime_limit_ms = 30000\nbank_ms = 0")
    first = _start("run", str(tournament), "--quiet")
    try:
        wait_until(lambda: _holds_the_lock(out, first), 60, "the lock")
        for command in (["run", str(tournament), "--quiet"], ["resume", str(out), "--quiet"]):
            refused = arena(*command, timeout=30)
            assert refused.returncode == 2
            assert f"in use by arena process {first.pid}" in _last_line(refused.stderr)
        assert first.poll() is None  # the first run was not disturbed
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    second = _start("resume", str(out), "--quiet")  # the kernel dropped the lock with the killed process
    try:
        wait_until(lambda: _holds_the_lock(out, second), 60, "the lock, taken by the resume")
    finally:
        second.send_signal(signal.SIGKILL)
        second.wait(10)
    wait_until(lambda: not processes_mentioning(str(out)), 30, "the killed runs' processes to end")


def test_resume_of_a_finished_tournament_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "cup"
    tournament = write_tournament(tmp_path, out, pairs=1)
    assert arena("run", str(tournament), "--quiet").returncode == 0
    before = rows(out / "arena.sqlite", DUMP), rows(out / "arena.sqlite", HANDS)
    for command in (["resume", str(out), "--quiet"], ["run", str(tournament), "--quiet"]):
        again = arena(*command)
        assert again.returncode == 0, again.stderr
        assert "finished already (3/3 pairs stored" in again.stdout and "nothing to do" in again.stdout
        assert (rows(out / "arena.sqlite", DUMP), rows(out / "arena.sqlite", HANDS)) == before


def test_resume_uses_the_stored_allow_unvalidated(tmp_path: Path) -> None:
    out = tmp_path / "cup"
    flags = ["--bots", "bots/random", "bench/bots/echo", "--pairs", "6", "--out", str(out), "--quiet"]
    refused = arena("run", *flags)
    assert refused.returncode == 2 and "only validated bots" in refused.stderr  # echo was never validated
    kill_9_once_stored(["run", *flags, "--allow-unvalidated"], out, patience_s=30)
    resumed = arena("resume", str(out), "--quiet")  # no --allow-unvalidated: the stored setting holds
    assert resumed.returncode == 0 and "6/6 stored" in resumed.stdout, resumed.stderr


def _commands(out: Path) -> list[list[str]]:
    return [["run", "--bots", "bots/random", "bench/bots/echo", "--out", str(out), "--allow-unvalidated", "--quiet"],
            ["resume", str(out)], ["leaderboard", str(out)], ["verify", str(out)], ["show", str(out), "p00000h0"],
            ["report", str(out), "-o", str(out.parent / "site")]]


def test_an_empty_database_is_refused_by_every_command_and_left_empty(tmp_path: Path) -> None:
    out = tmp_path / "cup"
    out.mkdir()
    (out / "arena.sqlite").touch()
    for command in _commands(out):
        result = arena(*command)
        assert result.returncode == 2, (command, result.stderr)
        assert "is empty (0 bytes)" in _last_line(result.stderr), command
        assert (out / "arena.sqlite").stat().st_size == 0
    assert {p.name for p in out.iterdir()} <= {"arena.sqlite", "arena.lock", "arena.log"}


def test_a_damaged_database_is_refused_by_every_command_and_never_written(tmp_path: Path) -> None:
    out = tmp_path / "cup"
    assert arena("run", str(write_tournament(tmp_path, out, pairs=4)), "--quiet").returncode == 0
    db = out / "arena.sqlite"
    data = bytearray(db.read_bytes())
    assert not (out / "arena.sqlite-wal").exists() or (out / "arena.sqlite-wal").stat().st_size == 0
    data[len(data) // 2:len(data) // 2 + 8192] = os.urandom(8192)
    db.write_bytes(bytes(data))
    for command in _commands(out):
        result = arena(*command)
        assert result.returncode == 2, (command, result.stderr)
        assert "damaged" in _last_line(result.stderr), (command, result.stderr)
        assert db.read_bytes() == data


def test_resume_migrates_a_store_an_older_arena_wrote(tmp_path: Path) -> None:
    """A tournament interrupted under the previous results schema: 'arena resume' refused it,
    saying that a writer must migrate it first ('arena resume' on its folder). It migrates it,
    and finishes what a fresh run of the same tournament stores."""
    out, clean = tmp_path / "cup", tmp_path / "clean"
    tournament = write_tournament(tmp_path, out, pairs=4, extra=PUBLIC)
    kill_9_once_stored(["run", str(tournament), "--quiet"], out)
    with sqlite3.connect(out / "arena.sqlite") as con:  # as schema 4 left it (schema 5 added the column)
        con.execute("ALTER TABLE entrants DROP COLUMN withdrawn")
        con.execute("PRAGMA user_version = 4")
    resumed = arena("resume", str(out), "--quiet")
    assert resumed.returncode == 0 and "12/12 stored" in resumed.stdout, resumed.stderr
    assert arena("run", str(write_tournament(tmp_path, clean, pairs=4, extra=PUBLIC)), "--quiet").returncode == 0
    assert rows(out / "arena.sqlite", MATCHES) == rows(clean / "arena.sqlite", MATCHES)


def test_results_that_contradict_each_other_are_refused_in_one_line(tmp_path: Path) -> None:
    """A pair marked unfinished by hand while its matches stay stored: resuming it would store
    them again. That was a raw IntegrityError traceback (exit 1); now one line says the stored
    results contradict each other and names 'arena verify' (exit 2), and nothing is written."""
    out = tmp_path / "cup"
    assert arena("run", str(write_tournament(tmp_path, out, pairs=2, extra=PUBLIC)), "--quiet").returncode == 0
    db = out / "arena.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("UPDATE pairs SET finished_at = NULL WHERE pair_index = 5")
        con.execute("UPDATE tournaments SET finished_at = NULL")
    before = rows(db, "SELECT count(*) FROM matches")
    resumed = arena("resume", str(out), "--quiet")
    assert resumed.returncode == 2 and "Traceback" not in resumed.stderr, resumed.stderr
    assert "contradict each other" in _last_line(resumed.stderr) and "arena verify" in resumed.stderr
    assert rows(db, "SELECT count(*) FROM matches") == before


def test_a_disk_running_full_stops_the_run_cleanly_and_resume_completes(tmp_path: Path) -> None:
    with mounted_tmpfs(tmp_path / "disk", "64m") as disk:
        out = disk / "cup"
        tournament = write_tournament(tmp_path, out, pairs=4, extra=PUBLIC)
        runner = _start("run", str(tournament), "--quiet")
        try:
            wait_until(lambda: stored_pairs(out / "arena.sqlite") >= 1, 120, "a stored pair")
            ballast = disk / "ballast"
            with ballast.open("wb") as fh:  # leave 4 MiB: less than the arena keeps free
                fh.truncate(shutil.disk_usage(disk).free - (4 << 20))
                os.posix_fallocate(fh.fileno(), 0, os.fstat(fh.fileno()).st_size)
            _, stderr = runner.communicate(timeout=120)
        finally:
            if runner.poll() is None:
                runner.kill()
        assert runner.returncode == 75, stderr
        assert "Traceback" not in stderr and "free some space, then 'arena resume" in stderr
        assert "MiB free" in stderr or "disk is full" in stderr
        stored = stored_pairs(out / "arena.sqlite")
        assert 0 < stored < 12 and rows(out / "arena.sqlite", "SELECT count(*) FROM matches")[0][0] == 2 * stored
        assert arena("verify", str(out)).returncode == 0  # what was stored is intact
        ballast.unlink()
        resumed = arena("resume", str(out), "--quiet")
        assert resumed.returncode == 0 and "12/12 stored" in resumed.stdout, resumed.stderr
        clean = tmp_path / "clean"
        assert arena("run", str(write_tournament(tmp_path, clean, pairs=4, extra=PUBLIC)), "--quiet").returncode == 0
        assert rows(out / "arena.sqlite", MATCHES) == rows(clean / "arena.sqlite", MATCHES)


def test_a_bot_edited_during_a_fresh_run_is_withdrawn_not_mixed_in(tmp_path: Path) -> None:
    bot = tmp_path / "mine"
    shutil.copytree(ROOT / "bots/random", bot, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "cup"
    tournament = write_tournament(tmp_path, out, bots=[str(bot), "bots/random", "bench/bots/echo"], pairs=4,
                                  extra="fresh = true")
    runner = _start("run", str(tournament), "--quiet")
    try:
        wait_until(lambda: stored_pairs(out / "arena.sqlite") >= 1, 120, "a stored pair")
        with (bot / "bot.py").open("a") as f:
            f.write("\n# edited during the run\n")
        stdout, stderr = runner.communicate(timeout=180)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, stderr
    assert "withdrawn: 'mine-0' changed during the run" in stderr and "withdrawn: mine-0" in stdout
    db = out / "arena.sqlite"
    assert rows(db, "SELECT label FROM entrants WHERE withdrawn IS NOT NULL") == [("mine-0",)]
    refused = rows(db, "SELECT p.pair_index, m.void, f.detail FROM pairs p JOIN matches m USING (tournament_id, "
                   "pair_index) JOIN faults f ON f.match_row = m.id WHERE f.detail LIKE 'refused:%'")
    assert refused and all(void == 1 and "'mine-0' changed during the run" in detail for _, void, detail in refused)
    others = rows(db, "SELECT void FROM matches m JOIN pairs p USING (tournament_id, pair_index) "
                  "WHERE p.entrant_a != 0 AND p.entrant_b != 0")
    assert others and all(void == 0 for (void,) in others)  # pairs without the edited bot are untouched
    show = arena("show", str(out), rows(db, "SELECT match_id FROM matches m JOIN faults f ON f.match_row = m.id "
                                            "WHERE f.detail LIKE 'refused:%' LIMIT 1")[0][0])
    assert "refused: 'mine-0' changed during the run" in show.stdout and "void match" in show.stdout


def test_a_leaderboard_export_the_disk_cannot_take_is_skipped_with_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A run stopped because its disk is full still shows its leaderboard: when even the exports
    (leaderboard.json, .csv) cannot be written, they are skipped with a warning. Before, the
    ENOSPC escaped, and the stopped run exited 2 ("error") instead of 75 ("free some space")."""
    import errno

    from arena.commands.tournament import _print_leaderboard

    out = tmp_path / "cup"
    assert arena("run", str(write_tournament(tmp_path, out, pairs=1, extra=PUBLIC)), "--quiet").returncode == 0
    (out / "leaderboard.json").unlink()

    def full(self: Path, *args: object, **kwargs: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    _print_leaderboard(out)
    printed = capsys.readouterr()
    assert "mu-3s" in printed.out and "could not write the leaderboard's exports" in printed.err
    assert not (out / "leaderboard.json").exists()
