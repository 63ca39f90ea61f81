"""Uploading to a running server, waiting on its validation and ladder, reading its results store."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx


def wait_for(what: str, probe: Callable[[], Any], timeout_s: float = 60.0) -> Any:
    """Poll ``probe`` until it returns something true (deadline-bounded)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.2)  # polling a live server with a deadline
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def upload(client: httpx.Client, data: bytes, name: str = "bot.tar.gz") -> httpx.Response:
    """``POST /api/submissions`` with ``data`` as the archive."""
    return client.post("/api/submissions", files={"archive": (name, data, "application/gzip")})


def verdict(client: httpx.Client, sid: int, timeout_s: float = 60.0) -> dict[str, Any]:
    """Poll the submission until it is accepted or rejected."""
    body: dict[str, Any] = wait_for(f"submission {sid}'s verdict", lambda: (got := client.get(
        f"/api/submissions/{sid}").json()).get("status") in ("accepted", "rejected") and got, timeout_s)
    return body


def board(client: httpx.Client) -> dict[str, Any]:
    body: dict[str, Any] = client.get("/api/leaderboard").json()
    return body


def line(client: httpx.Client, bot: str) -> dict[str, Any] | None:
    return next((b for b in board(client)["bots"] if b["bot"] == bot), None)


def ladder_rows(folder: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """Rows of the ladder's results store, read directly."""
    with sqlite3.connect(f"file:{folder / 'ladder' / 'arena.sqlite'}?mode=ro", uri=True) as db:
        return db.execute(sql, args).fetchall()
