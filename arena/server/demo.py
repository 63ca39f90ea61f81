"""``arena server demo DIR``: a ready competition with two demo participants, for trying it out."""

from __future__ import annotations

import io
from pathlib import Path

from arena.botproc.sandbox import REPO_ROOT
from arena.server.archive import pack
from arena.server.config import ServerConfig
from arena.server.db import DB_NAME, ServerDB
from arena.server.setup import add_participant, init_folder
from arena.server.submissions import queue_archive

# Who submits which bundled bot; each is the participant's first submission.
DEMO_BOTS = (("alice", "random"), ("bob", "greedy"))
# Short clocks: a demo ladder plays several pairs a second.
DEMO_CONFIG = ServerConfig(time_limit_ms=300, bank_ms=3000, handshake_ms=5000)


def make_demo(folder: Path) -> list[str]:
    """Create the demo data folder (organiser, alice and bob, their bots queued); the lines to print."""
    organiser, token = init_folder(folder, DEMO_CONFIG)
    lines = [f"created the demo server {folder}", f"organiser token: {token}"]
    db = ServerDB(folder)
    try:
        for name, bot in DEMO_BOTS:
            user, user_token = add_participant(folder, name)
            archive = pack(REPO_ROOT / "bots" / bot, lambda part: part == "__pycache__")
            sub = queue_archive(db, user, io.BytesIO(archive))
            lines.append(f"{name} token: {user_token} (submitted {sub.bot} version {sub.version})")
    finally:
        db.close()
    return lines


def demo_lines(folder: Path, port: int) -> list[str]:
    """Make the demo folder unless it exists; what to print before serving it."""
    lines = make_demo(folder) if not (folder / DB_NAME).exists() else [f"serving the existing demo server {folder}"]
    url = f"http://127.0.0.1:{port}"
    return lines + [
        f"open {url}/ to watch the live leaderboard (log in with a token to upload)",
        f"a second participant, from another shell: arena server add-user {folder} carol",
        f"  then: arena submit --server {url} --token TOKEN bots/expert --wait",
    ]
