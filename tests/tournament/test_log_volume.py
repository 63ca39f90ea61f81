"""A full bot-log volume (the harness's disk) never charges a bot: the arena writes the bots'
logs itself, sees ENOSPC, and voids the match as a harness fault (replayed, then stored void).

Needs root and tmpfs mounts: the bot-log folder ``OUT/bots`` is a small tmpfs, filled up.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_a_full_bot_log_volume_charges_no_bot(tmp_path: Path) -> None:
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
            kinds = {row[0] for row in db.execute("SELECT kind FROM faults")}
            charged = db.execute("SELECT count(*) FROM faults WHERE entrant IS NOT NULL").fetchone()[0]
            matches = db.execute("SELECT count(*), sum(void) FROM matches").fetchone()
            pairs = db.execute("SELECT count(*) FROM pairs WHERE finished_at IS NOT NULL").fetchone()[0]
            details = [row[0] for row in db.execute("SELECT detail FROM faults")]
        assert kinds == {"harness"} and charged == 0  # nobody charged, not even a crash
        assert matches == (2, 2) and pairs == 1  # void (after its replays) and stored: the run went on
        assert all("No space left on device" in d for d in details), details
        assert "cannot write bot log" in (out / "arena.log").read_text()
    finally:
        subprocess.run(["umount", "-l", str(logs)], check=False, timeout=30)
