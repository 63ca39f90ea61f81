"""Whole tournaments with real bot processes: consistency, kill -9 and resume, faults, Dask, bad inputs."""

from __future__ import annotations

import concurrent.futures as cf
import functools
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest

from arena import runner
from arena.botproc import bwrap_status
from arena.commands.run import run_tournament
from arena.tournament import load_config

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-m", "arena.cli"]


def write_tournament(folder: Path, out: Path, *, bots: list[str] | None = None, pairs: int = 2, seed: int = 3,
                     extra: str = "") -> Path:
    """A small round-robin among the given bot folders (relative to the repository)."""
    bots = bots or ["bots/random", "bots/random", "bench/bots/echo"]
    lines = [f'name = "cup"', f"seed = {seed}", f"pairs_per_pairing = {pairs}", "concurrency = 2",
             "allow_unvalidated = true", f'output = "{out}"', extra]
    for i, bot in enumerate(bots):
        lines += ["[[bots]]", f'path = "{ROOT / bot}"', f'name = "{Path(bot).name}-{i}"']
    path = folder / f"{out.name}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def arena(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return con.execute(sql).fetchall()


MATCHES = ("SELECT pair_index, half, seat0, seat1, winner_seat, score0, score1, forfeit, void, hands "
           "FROM matches ORDER BY pair_index, half")
HANDS = ("SELECT m.pair_index, m.half, h.hand_index, h.record_json FROM hands h JOIN matches m ON m.id = h.match_row "
         "ORDER BY m.pair_index, m.half, h.hand_index")


def stored_pairs(db: Path) -> int:
    """Pairs stored so far (0 while the database is being created)."""
    try:
        return rows(db, "SELECT count(*) FROM pairs WHERE finished_at IS NOT NULL")[0][0] if db.exists() else 0
    except sqlite3.Error:
        return 0


def processes_mentioning(text: str) -> list[int]:
    """Live (non-zombie) processes whose command line mentions ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def kill_9_once_stored(args: list[str], out: Path, pairs: int = 1, patience_s: float = 20) -> int:
    """Start ``arena ARGS``, SIGKILL it once ``pairs`` pairs are stored in ``out`` and wait for
    its workers and bots to die with it; the number of pairs stored at the kill."""
    runner = subprocess.Popen([*ARENA, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        wait_until(lambda: stored_pairs(out / "arena.sqlite") >= pairs, 120, f"{pairs} stored pair(s)")
        stored = stored_pairs(out / "arena.sqlite")
        runner.send_signal(signal.SIGKILL)
        runner.wait(10)
    finally:
        if runner.poll() is None:
            runner.kill()
    wait_until(lambda: not processes_mentioning(str(out)), patience_s, "the killed run's processes to end")
    return stored



def wait_until(condition, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)  # polling a condition with a deadline, not hoping a race away
    raise AssertionError(f"timed out waiting for {what}")


def test_a_small_tournament_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "cup"
    result = arena("run", str(write_tournament(tmp_path, out)), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "6/6 stored" in result.stdout and "mu-3s" in result.stdout
    board = json.loads((out / "leaderboard.json").read_text())
    standings = board["standings"]
    assert board["schema_version"] == 1 and board["pairs_done"] == board["pairs_total"] == 6
    assert sum(s["wins"] for s in standings) == sum(s["losses"] for s in standings) == 12
    assert all(s["matches"] == 8 for s in standings)  # 2 opponents x 2 pairs x 2 halves
    assert [s["rank"] for s in standings] == [1, 2, 3]
    assert board["ranked_by"] == "bt" and board["bt_model"]["unit"] == "match"  # finished: Bradley-Terry ranks
    assert standings[0]["bt"]["elo"] >= standings[1]["bt"]["elo"] >= standings[2]["bt"]["elo"]
    assert set(standings[0]["bt"]) == {"elo", "elo_ci95", "rank_ci95", "p_top1"}
    for row in standings:
        assert row["think_p50_ms"] is not None and row["think_max_ms"] >= row["think_p99_ms"] >= row["think_p50_ms"]
    matches = rows(out / "arena.sqlite", MATCHES)
    assert len(matches) == 12 and Counter((m[0], m[1]) for m in matches) == {(p, h): 1 for p in range(6) for h in (0, 1)}
    seats = Counter()
    for pair, half, seat0, seat1, *_ in matches:
        seats[(seat0, 0)] += 1
        seats[(seat1, 1)] += 1
    assert set(seats.values()) == {4}  # every entrant sat in each seat equally often
    games = Counter(frozenset((m[2], m[3])) for m in matches)
    assert set(games.values()) == {4}  # 2 pairs per pairing = 4 matches per pairing
    for pair in range(6):
        h0, h1 = [m for m in matches if m[0] == pair]
        assert (h0[2], h0[3]) == (h1[3], h1[2])  # the halves swap seats
    crosstable = board["crosstable"]
    for a, row in crosstable.items():
        for b, cell in row.items():
            assert cell["matches"] == 4 and cell["wins"] + crosstable[b][a]["wins"] == 4
    csv_lines = (out / "leaderboard.csv").read_text().splitlines()
    assert len(csv_lines) == 4 and csv_lines[0].startswith("rank,entrant,bot")
    verify = arena("verify", str(out))
    assert verify.returncode == 0 and "0 mismatches" in verify.stdout
    show = arena("show", str(out), "p00000h1")
    assert show.returncode == 0 and "Hand 1:" in show.stdout and "wins" in show.stdout.splitlines()[-1]
    table = arena("leaderboard", str(out), "--crosstable")
    assert table.returncode == 0 and "random-0" in table.stdout and "%" in table.stdout
    assert arena("show", str(out), "p99999h0").returncode == 2


def test_kill_9_mid_tournament_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    killed_out, clean_out = tmp_path / "killed", tmp_path / "clean"
    # two runs deal alike only from a public seed; lock-step, or every pair is stored before the kill
    spec = dict(pairs=6, seed=21, extra='deals = "public"\nmax_games = 1')
    stored_before = kill_9_once_stored(["run", str(write_tournament(tmp_path, killed_out, **spec)), "--quiet"],
                                       killed_out, pairs=2)
    assert stored_before < 18, "the tournament finished before it could be killed; make it longer"

    resumed = arena("resume", str(killed_out), "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert arena("run", str(write_tournament(tmp_path, clean_out, **spec)), "--quiet").returncode == 0

    assert rows(killed_out / "arena.sqlite", MATCHES) == rows(clean_out / "arena.sqlite", MATCHES)
    assert rows(killed_out / "arena.sqlite", HANDS) == rows(clean_out / "arena.sqlite", HANDS)
    assert rows(killed_out / "arena.sqlite", "SELECT count(*) FROM matches")[0][0] == 36
    snapshots = "SELECT after_pair, entrant, mu, sigma FROM rating_snapshots ORDER BY after_pair, entrant"
    assert rows(killed_out / "arena.sqlite", snapshots) == rows(clean_out / "arena.sqlite", snapshots)
    killed_board = json.loads((killed_out / "leaderboard.json").read_text())["standings"]
    clean_board = json.loads((clean_out / "leaderboard.json").read_text())["standings"]
    strip = lambda board: [{k: v for k, v in s.items() if not k.startswith(("think", "cpu"))} for s in board]  # noqa: E731
    assert strip(killed_board) == strip(clean_board)
    assert not processes_mentioning(str(killed_out))


def test_cluster_mode_gives_the_local_results(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    local = load_config(write_tournament(tmp_path, tmp_path / "local", pairs=1, seed=8, extra='deals = "public"'))
    run_tournament(local, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        remote = local.with_overrides(output=tmp_path / "dask", cluster=cluster.scheduler_address)
        report = run_tournament(remote, progress=False)
    assert report.complete
    assert rows(tmp_path / "dask" / "arena.sqlite", MATCHES) == rows(tmp_path / "local" / "arena.sqlite", MATCHES)
    assert rows(tmp_path / "dask" / "arena.sqlite", HANDS) == rows(tmp_path / "local" / "arena.sqlite", HANDS)


def test_a_changed_bot_or_changed_conditions_are_refused_on_resume_not_merged(tmp_path: Path) -> None:
    """A changed bot is a new entrant; a changed seed another schedule; a changed sandbox, disk
    allowance or process reuse other conditions for the bots (these once passed silently: a
    tournament begun in bubblewrap went on in the fallback)."""
    bot = tmp_path / "mybot"
    shutil.copytree(ROOT / "bots/random", bot, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "cup"
    tournament = write_tournament(tmp_path, out, bots=[str(bot), "bench/bots/echo"], pairs=6)
    kill_9_once_stored(["run", str(tournament), "--quiet"], out)
    with (bot / "bot.py").open("a") as f:
        f.write("\n# a change\n")
    again = arena("run", str(tournament), "--quiet")
    assert again.returncode == 2 and "changed since this tournament started" in again.stderr
    played_in = json.loads(rows(out / "arena.sqlite", "SELECT config_json FROM tournaments")[0][0])["sandbox"]
    assert played_in == ("bwrap" if bwrap_status()[0] is not None else "fallback")  # 'auto' as it resolved here
    other = "fallback" if played_in == "bwrap" else "bwrap"
    for flags, key in ((("--sandbox", other), "sandbox"), (("--fresh",), "fresh")):
        changed = arena("run", str(tournament), "--quiet", *flags)
        assert changed.returncode == 2 and f"{key} differs" in changed.stderr, changed.stderr
    other_seed = write_tournament(tmp_path, out, bots=[str(bot), "bench/bots/echo"], pairs=6, seed=99)
    clash = arena("run", str(other_seed), "--quiet")
    assert clash.returncode == 2 and "seed differs" in clash.stderr


def test_bad_output_folders_and_files_get_clear_errors(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "photo.jpg").write_text("x")
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "arena.sqlite").write_bytes(b"garbage" * 500)
    for out, message in ((a_file, "is a file"), (foreign, "not an arena output folder"),
                         (corrupt, "not a Sixty-Six Arena results database")):
        result = arena("run", "--bots", "bots/random", "bench/bots/echo", "--out", str(out), "--quiet",
                       "--allow-unvalidated")
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    assert (foreign / "photo.jpg").read_text() == "x" and len(list(foreign.iterdir())) == 1
    for command in (["leaderboard", str(foreign)], ["verify", str(corrupt)], ["resume", str(tmp_path / "none")]):
        result = arena(*command)
        assert result.returncode == 2 and result.stderr.startswith("arena: error:") and "Traceback" not in result.stderr
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text("bots = [")
    result = arena("run", str(bad_toml))
    assert result.returncode == 2 and "not valid TOML" in result.stderr


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _children(pid: int) -> list[int]:
    kids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids += [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            continue
    return kids


def test_a_worker_killed_mid_tournament_fails_only_what_it_held(tmp_path: Path) -> None:
    out, clean = tmp_path / "hurt", tmp_path / "clean"
    spec = dict(pairs=5, seed=33, extra='deals = "public"')
    runner = subprocess.Popen([*ARENA, "run", str(write_tournament(tmp_path, out, **spec)), "--quiet"],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def workers() -> list[int]:
            assert runner.poll() is None, "the runner ended before a worker could be killed"
            return [k for k in _children(runner.pid) if _cmdline(k) == _cmdline(runner.pid)]

        db = out / "arena.sqlite"
        wait_until(lambda: stored_pairs(db) >= 1, 120, "a stored pair")
        worker = wait_until(workers, 60, "a worker process")[0]  # (not a helper being forked at start-up)
        os.kill(worker, signal.SIGKILL)
        _, stderr = runner.communicate(timeout=180)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, stderr
    assert arena("run", str(write_tournament(tmp_path, clean, **spec)), "--quiet").returncode == 0
    assert rows(out / "arena.sqlite", MATCHES) == rows(clean / "arena.sqlite", MATCHES)
    assert rows(out / "arena.sqlite", "SELECT count(*) FROM matches")[0][0] == 30
    log = (out / "arena.log").read_text()
    stored = rows(out / "arena.sqlite", "SELECT finished_at IS NOT NULL FROM pairs")
    assert all(done for (done,) in stored)
    # Only a pair the killed worker was playing alone used up an attempt; the pairs of a batch it
    # shared, and the other pairs in flight, were replayed free.
    charged = [int(i) for line in re.findall(r"a worker died .*; pairs \[([\d, ]+)\] were charged", log)
               for i in line.split(",")]
    attempts = dict(rows(out / "arena.sqlite", "SELECT pair_index, attempts FROM pairs"))
    assert attempts == {i: 2 if i in charged else 1 for i in range(15)}
    assert not processes_mentioning(str(out))


def greeted_since(before: int, ready: Counter[str]) -> bool:
    """New workers greeted bots since ``before`` were: they have a pair seated."""
    return sum(ready.values()) >= before + 2


def test_three_kills_of_the_workers_of_a_multiplexed_run_void_no_pair(tmp_path: Path) -> None:
    """Both workers are killed three times, the first while each plays a multiplexed batch of
    several pairs. Which pair killed a worker is then unknown: those pairs are replayed free,
    each alone, and a later death charges only the one pair its worker held. Before, each death
    charged every pair of the batch, so three deaths stored a whole batch void: "nothing lost"
    broke when an operator or the OOM killer killed workers. Now nothing is void, and the
    results equal an undisturbed run's."""
    out, clean = tmp_path / "hurt", tmp_path / "clean"
    spec = dict(pairs=12, seed=34, extra='deals = "public"')
    runner = subprocess.Popen([*ARENA, "run", str(write_tournament(tmp_path, out, **spec)), "--quiet"],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed: set[int] = set()
    try:
        def ready_bots() -> Counter[str]:
            """Bots greeted so far, by the worker process (its log name) that started them."""
            log = out / "arena.log"
            lines = log.read_text(errors="replace").splitlines() if log.exists() else []
            return Counter(line.split()[3] for line in lines if " ready (pid " in line)

        def playing_workers(enough: Callable[[Counter[str]], bool]) -> list[int]:
            """The two workers, once ``enough`` of their bots shook hands (so they have matches seated)."""
            assert runner.poll() is None, "the runner ended before its workers could be killed three times"
            found = [k for k in _children(runner.pid) if _cmdline(k) == _cmdline(runner.pid) and k not in killed]
            return found if len(found) == 2 and enough(ready_bots()) else []

        def each_greeted_a_batch(ready: Counter[str]) -> bool:
            """Two workers greeted their batch's four processes: each has several pairs seated."""
            return sum(n >= 4 for n in ready.values()) >= 2

        enough: Callable[[Counter[str]], bool] = each_greeted_a_batch
        for _ in range(3):
            for worker in wait_until(lambda: playing_workers(enough), 60, "two workers playing"):
                killed.add(worker)
                os.kill(worker, signal.SIGKILL)
            enough = functools.partial(greeted_since, sum(ready_bots().values()))
        _, stderr = runner.communicate(timeout=300)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, stderr
    assert rows(out / "arena.sqlite", "SELECT count(*) FROM matches WHERE void = 1") == [(0,)]
    assert arena("run", str(write_tournament(tmp_path, clean, **spec)), "--quiet").returncode == 0
    assert rows(out / "arena.sqlite", MATCHES) == rows(clean / "arena.sqlite", MATCHES)


class _BreaksAfterTwo(cf.Executor):
    """Plays the first two submissions at once, in this process; every later one fails as the
    futures of a pool whose worker died do. ``played`` counts each pair's plays, over all such
    executors."""

    played: Counter[int] = Counter()

    def __init__(self) -> None:
        self.given = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        future: cf.Future[Any] = cf.Future()
        self.given += 1
        if self.given > 2:
            future.set_exception(BrokenProcessPool("a worker died"))
            return future
        for task in args[0] if isinstance(args[0], list) else [args[0]]:
            self.played[task.pair_index] += 1
        future.set_result(fn(*args, **kwargs))
        return future


def test_pairs_finished_before_a_worker_died_keep_their_results(tmp_path: Path) -> None:
    """A worker dies while the pool holds pairs another worker finished: those are stored, not
    played again. Before, the first dead worker's future seen sent every pair in flight back to
    the queue, finished ones included, so a bot with any randomness of its own could get a
    second, different result. Every pair is played once, and the results equal a normal run's."""
    out, clean = tmp_path / "hurt", tmp_path / "clean"
    spec = dict(bots=["bots/random", "bench/bots/echo"], pairs=6, extra='deals = "public"\nmax_games = 1')
    config = load_config(write_tournament(tmp_path, out, **spec))
    _BreaksAfterTwo.played.clear()
    try:
        report = run_tournament(config, progress=False, executor_factory=_BreaksAfterTwo)
    finally:  # the bots of the pairs played in this process
        pool = getattr(runner._local, "pool", None)
        if pool is not None:
            pool.close()
        runner._local.pool = None
    assert report.finished and report.pairs_played == 6
    assert _BreaksAfterTwo.played == {i: 1 for i in range(6)}
    assert arena("run", str(write_tournament(tmp_path, clean, **spec)), "--quiet").returncode == 0
    assert rows(out / "arena.sqlite", MATCHES) == rows(clean / "arena.sqlite", MATCHES)


def test_faulty_bots_in_a_tournament_are_recorded_shown_and_the_tournament_completes(tmp_path: Path) -> None:
    out = tmp_path / "faulty"
    tournament = write_tournament(tmp_path, out, bots=["bots/random", "bots/faulty/crash", "bots/faulty/illegal"],
                                  pairs=1, extra="[time_control]\ntime_limit_ms = 500\nbank_ms = 1000")
    result = arena("run", str(tournament), "--quiet")
    assert result.returncode == 0, result.stderr
    board = {s["bot"]: s for s in json.loads((out / "leaderboard.json").read_text())["standings"]}
    assert board["random-0"]["wins"] == 4 and board["random-0"]["faults"] == 0
    for bot in ("crash-1", "illegal-2"):
        assert board[bot]["faults"] >= 2 and board[bot]["forfeits"] >= 2
    kinds = rows(out / "arena.sqlite", "SELECT e.label, f.kind FROM faults f JOIN entrants e ON e.entrant = f.entrant")
    assert {kind for label, kind in kinds if label == "crash-1"} == {"crash"}
    assert {kind for label, kind in kinds if label == "illegal-2"} == {"illegal"}
    evidence = rows(out / "arena.sqlite", "SELECT fault_json FROM faults WHERE kind = 'crash' LIMIT 1")[0][0]
    assert json.loads(evidence)["exit"] and json.loads(evidence)["request"]
    faulted = rows(out / "arena.sqlite", "SELECT match_id FROM matches WHERE forfeit = 1 ORDER BY match_id")
    show = arena("show", str(out), faulted[0][0])
    assert show.returncode == 0 and "FAULT" in show.stdout and "by forfeit" in show.stdout
    assert "faults" in arena("leaderboard", str(out)).stdout
    assert arena("verify", str(out)).returncode == 0


def test_ctrl_c_finishes_the_pairs_in_flight_and_resume_completes(tmp_path: Path) -> None:
    out = tmp_path / "stopped"
    # Lock-step (max_games = 1): a multiplexed run can store all 18 pairs before the signal lands,
    # and then there is nothing left to stop.
    config = write_tournament(tmp_path, out, pairs=6, seed=5, extra="max_games = 1")
    runner = subprocess.Popen([*ARENA, "run", str(config), "--quiet"],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        db = out / "arena.sqlite"
        wait_until(lambda: stored_pairs(db) >= 1, 120, "a stored pair")
        runner.send_signal(signal.SIGINT)
        stdout, stderr = runner.communicate(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
    stored = stored_pairs(out / "arena.sqlite")
    assert stored < 18  # stopped early: a clean exit that says how to go on
    assert runner.returncode == 130 and "arena resume" in stderr and "Traceback" not in stderr
    assert rows(out / "arena.sqlite", "SELECT count(*) FROM matches")[0][0] == 2 * stored
    assert not processes_mentioning(str(out))
    resumed = arena("resume", str(out), "--quiet")
    assert resumed.returncode == 0 and "18/18 stored" in resumed.stdout


def test_only_validated_bots_enter_unless_allowed_and_registry_entries_can_be_named(tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    refused = arena("run", "--bots", "bots/random", "bench/bots/echo", "--out", str(tmp_path / "a"), "--quiet")
    assert refused.returncode == 2 and "only validated bots" in refused.stderr and "bench/bots/echo" in refused.stderr
    assert not (tmp_path / "a").exists()
    submitted = arena("submit", "bots/random", "--registry", str(registry))
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    (tmp_path / "cup.toml").write_text(f"""
seed = 4
output = "out"
registry = "{registry}"
[[bots]]
registry = "random"
[[bots]]
registry = "random@1.0"
name = "random-again"
""")
    ok = arena("run", str(tmp_path / "cup.toml"), "--quiet")
    assert ok.returncode == 0, ok.stderr
    labels = {s["bot"] for s in json.loads((tmp_path / "out" / "leaderboard.json").read_text())["standings"]}
    assert labels == {"random", "random-again"}
    (tmp_path / "missing.toml").write_text(f'registry = "{registry}"\n[[bots]]\nregistry = "nobody"\n'
                                           '[[bots]]\nregistry = "random"\n')
    missing = arena("run", str(tmp_path / "missing.toml"))
    assert missing.returncode == 2 and "no bot 'nobody' in the registry" in missing.stderr
