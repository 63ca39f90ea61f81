"""A team of two hostile bots against the arena's stopped clocks, in a real multiplexed
tournament: ``clockstop`` resets its link at every first request and stays alive, so the arena
waits to tell a crash from a disconnect with every clock stopped, then starts a process for its
next match; ``freeloader`` is thinking in another match of the same worker meanwhile. Stopped
clocks spare the bots thinking the arena's wait, but must not hand them that time: they are
frozen through it. Only ``clockstop`` is charged, and the freeloader's matches against an
innocent bot end as they do without the team.

Needs root with writable cgroups (freezing and each decision's CPU time are theirs).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.integration, pytest.mark.requires("cgroups")]

# One worker, so every pair is in one conductor, several games a process (the team's bots say 4).
SETTINGS = ('name = "clocks"\nseed = 7\npairs_per_pairing = 2\nconcurrency = 1\ndeals = "public"\nmax_games = 4\n'
            "allow_unvalidated = true\n")
LABELS = ("team", "freeloader", "innocent")
# A decision's CPU may exceed its wall time by a round's worth of shared counter readings, some
# milliseconds; the arena's wait for a lost bot (0.5 s) showed as up to 240 ms in a decision
# (several games' spins queued) before such waits froze it.
SLACK_MS = 50.0


def run_tournament(folder: Path, name: str, first: str) -> Path:
    out = folder / name
    lines = [SETTINGS + f'output = "{out}"']
    for label, path in zip(LABELS, (first, "bots/hostile/freeloader", "bots/random")):
        lines += ["[[bots]]", f'path = "{ROOT / path}"', f'name = "{label}"']
    spec = folder / f"{name}.toml"
    spec.write_text("\n".join(lines) + "\n")
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(spec), "--quiet"], cwd=folder,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out / "arena.sqlite"


def query(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return con.execute(sql).fetchall()


def free_time_ms(db: Path, label: str) -> list[float]:
    """By how much the CPU of each of ``label``'s decisions exceeded its wall time, where it did."""
    rows = query(db, "SELECT t.times_ms_json, t.cpu_ms_json FROM think_times t JOIN entrants e "
                     f"ON e.entrant = t.entrant WHERE e.label = '{label}'")
    pairs = [(wall, cpu) for walls, cpus in rows for wall, cpu in zip(json.loads(walls), json.loads(cpus or "[]"))]
    assert pairs and all(cpu is not None for _, cpu in pairs), "no CPU time recorded"
    return [cpu - wall for wall, cpu in pairs if cpu - wall > SLACK_MS]


INNOCENT_MATCHES = ("SELECT m.pair_index, m.half, m.winner_seat, m.score0, m.score1, m.forfeit, m.void, m.hands "
                    "FROM matches m JOIN entrants a ON a.entrant = m.seat0 JOIN entrants b ON b.entrant = m.seat1 "
                    "WHERE a.label != 'team' AND b.label != 'team' ORDER BY m.pair_index, m.half")
CHARGED = "SELECT DISTINCT e.label, f.kind FROM faults f JOIN entrants e ON e.entrant = f.entrant"


def test_a_bot_that_makes_the_arena_wait_hands_nobody_free_thinking_time(tmp_path: Path) -> None:
    baseline = run_tournament(tmp_path, "baseline", "bots/random")
    hostile = run_tournament(tmp_path, "hostile", "bots/hostile/clockstop")
    assert query(baseline, CHARGED) == []
    assert query(hostile, CHARGED) == [("team", "disconnect")]  # only the attacker, every time
    assert query(hostile, INNOCENT_MATCHES) == query(baseline, INNOCENT_MATCHES)
    assert free_time_ms(hostile, "freeloader") == []  # it thought on no stopped time
    assert free_time_ms(hostile, "innocent") == []
