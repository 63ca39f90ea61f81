"""The README's demo command: a server with two demo participants whose bots play at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from .conftest import ROOT, Server, free_port
from .helpers import board, wait_for

pytestmark = pytest.mark.e2e


def test_server_demo_serves_a_playing_ladder(tmp_path: Path) -> None:
    folder = tmp_path / "demo-server"
    server = Server(folder, "organiser")
    server.port = free_port()
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        server.process = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "server", "demo", str(folder), "--port", str(server.port),
             "--workers", "1"], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with server.client() as anonymous:
            wait_for("the demo ladder", lambda: _playing(anonymous), 180)  # two validations first
        text = log.read_text()
        tokens = dict(line.split(" token: ") for line in text.splitlines() if " token: " in line)
        assert set(tokens) == {"organiser", "alice", "bob"}
        with server.client() as who:
            who.headers["Authorization"] = "Bearer " + tokens["alice"].split(" ")[0]
            assert who.get("/api/me").json()["name"] == "alice"
        assert f"arena server add-user {folder} carol" in text
    finally:
        server.stop()


def _playing(client: httpx.Client) -> bool:
    try:
        lb = board(client)
    except httpx.TransportError:  # the server is still starting
        return False
    return {b["bot"] for b in lb["bots"]} == {"random", "greedy"} and lb["pairs"] >= 1
