"""Fixtures for the protocol tests: a real ROUTER on a short ipc:// path, bot processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import jsonschema
import orjson
import pytest
import zmq

REPO = Path(__file__).resolve().parents[2]
SCHEMA_PATH = REPO / "protocol" / "schema.json"
RANDOM_BOT = REPO / "bots" / "random" / "bot.py"
SCRIPTS = Path(__file__).resolve().parent / "scripts"
WAIT_MS = 10_000  # the longest any test waits for one message


class FakeArena:
    """The arena's side of the link, for tests: a bound ROUTER; every wait has a deadline."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
        self.sock.bind(endpoint)
        self.received: list[bytes] = []  # every payload a bot sent, for schema checks

    def recv(self, timeout_ms: int = WAIT_MS) -> tuple[bytes, bytes]:
        """(routing id, payload) of the next message; fails the test after ``timeout_ms``."""
        if not self.sock.poll(timeout_ms, zmq.POLLIN):
            raise AssertionError(f"no message from a bot within {timeout_ms} ms")
        frames = self.sock.recv_multipart()
        assert len(frames) == 2, frames
        self.received.append(frames[1])
        return frames[0], frames[1]

    def recv_json(self, timeout_ms: int = WAIT_MS) -> tuple[bytes, dict[str, Any]]:
        ident, data = self.recv(timeout_ms)
        return ident, orjson.loads(data)

    def send(self, ident: bytes, data: bytes) -> None:
        self.sock.send_multipart([ident, data])

    def close(self) -> None:
        self.sock.close(0)
        self.ctx.term()


class BotProcess:
    """A bot subprocess with stdout/stderr in files (never an unread pipe)."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        with open(self.stderr_path, "wb") as err, open(os.devnull, "wb") as out:
            self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err)

    def wait(self, timeout_s: float = WAIT_MS / 1000) -> int:
        return self.proc.wait(timeout=timeout_s)

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=WAIT_MS / 1000)


@pytest.fixture(scope="session")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


@pytest.fixture
def ipc_dir() -> Iterator[Path]:
    """A short private directory for ipc:// sockets (paths must stay <= 107 characters)."""
    path = Path(tempfile.mkdtemp(prefix="ssa-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def arena(ipc_dir: Path) -> Iterator[FakeArena]:
    endpoint = f"ipc://{ipc_dir}/arena.sock"
    assert len(endpoint) - len("ipc://") <= 107
    fake = FakeArena(endpoint)
    try:
        yield fake
    finally:
        fake.close()


SpawnBot = Callable[..., BotProcess]


@pytest.fixture
def spawn_bot(arena: FakeArena, tmp_path: Path) -> Iterator[SpawnBot]:
    """``spawn_bot(script, token, *args, **env)`` starts ``{python} script`` from its folder,
    with ARENA_ENDPOINT/ARENA_TOKEN set as the arena would; all are killed at teardown."""
    started: list[BotProcess] = []

    def spawn(script: Path, token: str, *args: str, **env: str) -> BotProcess:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        full_env.update(ARENA_ENDPOINT=arena.endpoint, ARENA_TOKEN=token, PYTHONPATH=str(REPO))
        full_env.update(env)
        argv = [sys.executable, script.name, *args]
        bot = BotProcess(argv, script.parent, full_env, tmp_path / f"{token}.stderr")
        started.append(bot)
        return bot

    try:
        yield spawn
    finally:
        for bot in started:
            bot.stop()
