"""A real ``arena server run`` process on 127.0.0.1 (a free port), driven with httpx."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the server needs its extra: pip install -e '.[server]' (the test extra has it)")
pytest.importorskip("httpx", reason="pip install httpx (the test extra has it)")

import httpx  # noqa: E402  (after the skip above)

from arena.botproc import bwrap_status  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 30.0


def arena(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the ``arena`` command in a subprocess."""
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, check=check,
                          cwd=ROOT, timeout=60)


def last_line(output: str) -> str:
    """The last line of a command's output (where tokens are printed)."""
    return output.rstrip("\n").splitlines()[-1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A data folder with its organiser and a server process once ``start`` ran."""

    folder: Path
    organiser: str
    tokens: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add_user(self, name: str, *flags: str) -> str:
        token = last_line(arena("server", "add-user", str(self.folder), name, *flags).stdout)
        self.tokens[name] = token
        return token

    def start(self, *flags: str) -> None:
        self.port = free_port()
        log = open(self.folder / "server-test.log", "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "server", "run", str(self.folder), "--port", str(self.port), *flags],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited with {self.process.returncode}: {self.log_text()}")
            try:
                if httpx.get(f"{self.url}/api/health", timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)  # polling for the port to open; the deadline bounds it
        raise AssertionError(f"the server did not answer within {START_TIMEOUT_S} s: {self.log_text()}")

    def log_text(self) -> str:
        path = self.folder / "server-test.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        if sig == signal.SIGKILL:
            os.killpg(self.process.pid, signal.SIGKILL)
        else:
            self.process.send_signal(sig)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def client(self, who: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0)


# Millisecond-scale limits: validations and ladder games stay short.
FAST = ("--time-limit-ms", "300", "--handshake-ms", "5000", "--bank-ms", "2000")


def init_server(folder: Path, *flags: str) -> Server:
    """``arena server init`` a data folder (not started): sandboxed by bubblewrap where it runs,
    else (a machine without it) in the fallback, which ``arena server run`` serves only if asked."""
    if "--sandbox" not in flags and bwrap_status()[0] is None:
        flags = (*flags, "--sandbox", "fallback")
    token = last_line(arena("server", "init", str(folder), *flags).stdout)
    return Server(folder, "organiser", {"organiser": token})


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """``make_server(*init_flags)``: a fresh data folder (not started yet); stopped at the end."""
    made: list[Server] = []

    def make(*flags: str) -> Server:
        made.append(init_server(tmp_path / f"server{len(made)}", *flags))
        return made[-1]

    yield make
    for server in made:
        server.stop()


@pytest.fixture(scope="session")
def competition(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One running server shared by the tests: participants alice, bob, carol and mallory;
    alice's ``alicebot`` (the random bot) and bob's ``bobbot`` (greedy) accepted and playing."""
    from .archives import bot_targz
    from .helpers import board, upload, verdict, wait_for

    server = init_server(tmp_path_factory.mktemp("competition") / "data", *FAST, "--pair-floor", "1")
    for name in ("alice", "bob", "carol", "mallory"):
        server.add_user(name)
    server.start("--workers", "1")
    try:
        with server.client("alice") as alice, server.client("bob") as bob:
            first = upload(alice, bot_targz("alicebot")).json()
            second = upload(bob, bot_targz("bobbot", source="greedy")).json()
            assert verdict(alice, first["id"])["status"] == "accepted"
            assert verdict(bob, second["id"])["status"] == "accepted"
            wait_for("two bots with games", lambda: (lb := board(bob))["pairs"] >= 3 and len(lb["bots"]) == 2)
        yield server
    finally:
        server.stop()
