"""Hostile bots against the per-bot control groups, in real matches and a small tournament:
two CPU hogs (6 busy processes each) and a fork bomb. Only they may be charged; the other pairs'
results equal a run without them; an innocent bot's decisions stay quick at tight clocks.

Needs root with writable cgroups and bubblewrap (the guarantees are those of the groups).
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-m", "arena.cli"]
pytestmark = [pytest.mark.integration, pytest.mark.requires("cgroups", "bubblewrap")]

# 10 ms a decision; the bank absorbs a rare scheduler delay, while a hog that slowed innocents
# on every decision would drain it within a hand. With two hogs thawed at once (one per match in
# play) the scope weighed by the scheduler's highest weight held both cores, innocent answers
# waited up to 145 ms to be read, and this bank ran dry (cgroups.SCOPE_WEIGHT_WHY); with the
# hogs' processes free to run on either core, an innocent one waited behind them now and then
# (cores.PINNING_WHY): each worker's lock-step bots now have a core of their own.
TIGHT = "[time_control]\ntime_limit_ms = 10\nbank_ms = 50"
HOSTILE = ("bots/hostile/cpuhog", "bots/hostile/cpuhog", "bots/hostile/forkbomb")
ATTACKERS = ("a", "b", "c")
INNOCENT = ("expert", "greedy")


def run_tournament(folder: Path, name: str, first: tuple[str, ...]) -> Path:
    out = folder / name
    lines = [f'name = "hostile"', "seed = 4", "pairs_per_pairing = 2", "concurrency = 2", 'deals = "public"',
             # Lock-step: a bot serving several games answers a request after its other games'
             # ones, and at 10 ms that queue alone can time it out; here only the hogs may slow anyone.
             "max_games = 1",
             "allow_unvalidated = true", f'output = "{out}"']
    for label, path in zip((*ATTACKERS, *INNOCENT), (*first, *(f"bots/{b}" for b in INNOCENT))):
        lines += ["[[bots]]", f'path = "{ROOT / path}"', f'name = "{label}"']
    spec = folder / f"{name}.toml"
    spec.write_text("\n".join(lines) + "\n" + TIGHT + "\n")
    done = subprocess.run([*ARENA, "run", str(spec), "--quiet"], cwd=folder, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return out / "arena.sqlite"


def query(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return con.execute(sql).fetchall()


INNOCENT_MATCHES = ("SELECT pair_index, half, winner_seat, score0, score1, forfeit, void, hands FROM matches "
                    f"WHERE seat0 >= {len(ATTACKERS)} AND seat1 >= {len(ATTACKERS)} ORDER BY pair_index, half")


CHARGED = "SELECT e.label, f.kind FROM faults f JOIN entrants e ON e.entrant = f.entrant"


def test_two_cpu_hogs_and_a_fork_bomb_charge_nobody_else_at_tight_clocks(tmp_path: Path) -> None:
    baseline = run_tournament(tmp_path, "baseline", ("bots/random",) * len(ATTACKERS))
    if query(baseline, CHARGED):  # 10 ms clocks then measure the machine, not the hostile bots
        pytest.skip(f"the machine is too busy for 10 ms clocks (load {os.getloadavg()[0]:.0f} on "
                    f"{os.cpu_count()} CPUs): even the run without hostile bots charged {query(baseline, CHARGED)}")
    hostile = run_tournament(tmp_path, "hostile", HOSTILE)
    charged = query(hostile, CHARGED)
    assert {label for label, _kind in charged} <= set(ATTACKERS), charged  # only the attackers, if anyone
    assert query(hostile, INNOCENT_MATCHES) == query(baseline, INNOCENT_MATCHES)
    innocent_times = f"SELECT times_ms_json FROM think_times WHERE entrant >= {len(ATTACKERS)}"
    times = [ms for (raw,) in query(hostile, innocent_times) for ms in json.loads(raw)]
    assert times and statistics.median(times) < 5.0  # generous: the hog's pair never reaches them


def test_arena_match_with_a_fork_bomb_charges_only_the_bomb(tmp_path: Path) -> None:
    done = subprocess.run([*ARENA, "match", str(ROOT / "bots/hostile/forkbomb"), str(ROOT / "bots/random"),
                           "--json", "--run-dir", str(tmp_path / "logs")], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout[done.stdout.index("{"):])
    assert all(f["seat"] == 0 for f in outcome["faults"]), outcome["faults"]
    stderr = next((tmp_path / "logs").glob("hostile-forkbomb-*/stderr.log")).read_text()
    assert 20 <= int(stderr.split("forkbomb: ")[1].split()[0]) < 64  # stopped by the pids limit
