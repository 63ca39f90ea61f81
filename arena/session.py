"""A bot session: one sandboxed bot process and the arena's ZeroMQ link to it.

Each session binds its own ROUTER socket on its own ``ipc://`` path, so a socket monitor's
``disconnected`` event names the bot whose link was reset (an oversized message) without
guessing. ``start_session`` is the one way in: it starts the process, waits for the
``hello`` within the handshake limit and answers ``welcome`` or a typed ``reject``; any
failure kills the process and leaves the session dead with the fault that killed it.
"""

from __future__ import annotations

import logging
import secrets
import time
from enum import Enum
from pathlib import Path
from typing import Any

import zmq
from zmq.utils.monitor import parse_monitor_message

from arena.botproc import BotProcess, Limits, Manifest, SandboxMode, start_bot
from arena.botproc.view import make_link_folder
from arena.errors import ArenaError
from arena.faults import MAX_STDERR_CHARS, Fault, FaultKind, truncate
from protocol import (
    MAX_MESSAGE_BYTES,
    PROTOCOL_MAJOR,
    ProtocolError,
    make_reject,
    make_shutdown,
    make_welcome,
    parse_hello,
)

log = logging.getLogger(__name__)

_EXIT_GRACE_S = 0.5  # how long a disconnected bot gets to show that it exited (crash vs disconnect)


class SessionState(Enum):
    """A session's life: it is ready to play until it dies or is closed."""

    STARTING = "starting"
    READY = "ready"
    DEAD = "dead"
    CLOSED = "closed"


class BotSession:
    """One bot process, its link and its bookkeeping; close() ends both (idempotent)."""

    def __init__(self, name: str, manifest: Manifest, ctx: zmq.Context[Any], endpoint: str) -> None:
        self.name = name
        self.manifest = manifest
        self.endpoint = endpoint
        self.token = secrets.token_hex(16)
        self.state = SessionState.STARTING
        self.process: BotProcess | None = None
        self.max_games = 1
        self.seq = 0
        self.dropped_replies = 0
        self.death: Fault | None = None
        self.served_pairs: set[Any] = set()
        self.load = 0  # matches this session is in right now
        self.outstanding = 0  # requests sent and not yet answered or faulted
        self.socket: zmq.Socket[bytes] = ctx.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.ROUTER_MANDATORY, 1)
        self.socket.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        self.monitor: zmq.Socket[bytes] = self.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self.socket.bind(endpoint)

    def __repr__(self) -> str:
        pid = self.process.pid if self.process else None
        return f"<BotSession {self.name} pid={pid} {self.state.value}>"

    @property
    def alive(self) -> bool:
        """Whether the session can take requests."""
        return self.state is SessionState.READY

    def next_seq(self) -> int:
        """The next request number on this link (unique and increasing)."""
        self.seq += 1
        return self.seq

    def send(self, payload: bytes) -> bool:
        """Send one message to the bot; False if the link could not take it."""
        try:
            self.socket.send_multipart([self.token.encode(), payload], flags=zmq.NOBLOCK)
            return True
        except zmq.ZMQError as exc:
            log.info("send to %s failed: %s", self, exc)
            return False

    def begin_request(self) -> int | None:
        """A request is about to be sent: thaw the bot; its CPU nanoseconds so far."""
        self.outstanding += 1
        if self.process is None:
            return None
        self.process.thaw()
        return self.process.cpu_ns()

    def end_request(self) -> int | None:
        """A request was answered or faulted: freeze the bot if it owes no other answer (no
        thinking on the opponent's time); its CPU nanoseconds so far."""
        self.outstanding = max(0, self.outstanding - 1)
        if self.process is None:
            return None
        if self.outstanding == 0:
            self.process.freeze()
        return self.process.cpu_ns()

    def receive_all(self) -> list[bytes]:
        """Every message waiting on the link (frames from another identity are dropped)."""
        messages = []
        while True:
            try:
                frames = self.socket.recv_multipart(flags=zmq.NOBLOCK)
            except zmq.Again:
                return messages
            if len(frames) == 2 and frames[0] == self.token.encode():
                messages.append(frames[1])
            else:
                self.dropped_replies += 1

    def disconnected(self) -> bool:
        """Drain the monitor; True if the link was reset since the last call."""
        reset = False
        while True:
            try:
                event = parse_monitor_message(self.monitor.recv_multipart(flags=zmq.NOBLOCK))
            except zmq.Again:
                return reset
            if event["event"] == zmq.EVENT_DISCONNECTED:
                reset = True

    def exited(self) -> bool:
        """Whether the bot process has ended."""
        return self.process is None or self.process.poll() is not None

    def fail(self, kind: FaultKind, detail: str, *, reply: bytes | None = None) -> Fault:
        """Mark the session dead with a fault carrying the process's exit and stderr tail."""
        fault = Fault(
            kind=kind, seat=None, bot=self.name, detail=detail, reply=truncate(reply),
            dropped_replies=self.dropped_replies, exit=self.exit_description(), stderr_tail=self.stderr_tail(),
        )
        if self.state is not SessionState.CLOSED:
            self.state = SessionState.DEAD
        self.death = self.death or fault
        self.kill()
        return fault

    def classify_loss(self) -> Fault:
        """The link reset or the process ended: a crash if it exited, else a disconnect."""
        if self.process is not None:
            self.process.wait(_EXIT_GRACE_S)
        if self.exited():
            return self.fail(FaultKind.CRASH, f"bot process ended ({self.exit_description()})")
        return self.fail(FaultKind.DISCONNECT, "the link was reset (a message over the size cap?)")

    def exit_description(self) -> str | None:
        """How the process ended, or None while it runs."""
        if self.process is None or self.process.poll() is None:
            return None
        return self.process.exit_description()

    def stderr_tail(self) -> str | None:
        """The last lines the bot wrote to stderr."""
        if self.process is None:
            return None
        return truncate(self.process.stderr_tail(), MAX_STDERR_CHARS)

    def kill(self) -> None:
        """Stop the bot process (the whole sandbox)."""
        if self.process is not None:
            self.process.kill()

    def close(self, *, polite: bool = True) -> None:
        """Say ``shutdown`` if alive, then kill the process and close the sockets."""
        if self.state is SessionState.CLOSED:
            return
        if polite and self.state is SessionState.READY:
            self.send(make_shutdown("arena closing"))
        self.state = SessionState.CLOSED
        if self.process is not None:
            self.process.close()
        self.socket.disable_monitor()
        self.monitor.close(linger=0)
        self.socket.close(linger=0)


def start_session(
    manifest: Manifest,
    ctx: zmq.Context[Any],
    *,
    socket_dir: Path,
    run_dir: Path,
    handshake_s: float,
    max_games: int = 1,
    rules: dict[str, Any] | None = None,
    limits: Limits | None = None,
    sandbox: SandboxMode | str = SandboxMode.AUTO,
    name: str | None = None,
    index: int = 0,
) -> BotSession:
    """Start ``manifest``'s bot and shake hands; a failed start gives a dead session with its fault."""
    endpoint = f"ipc://{make_link_folder(socket_dir, str(index))}/link.sock"  # one folder per bot
    session = BotSession(name or manifest.name, manifest, ctx, endpoint)
    try:
        session.process = start_bot(manifest, run_dir=run_dir, endpoint=endpoint, token=session.token,
                                    limits=limits, sandbox=sandbox)
    except ArenaError as exc:  # the sandbox could not be set up: our side, not the bot's
        session.fail(FaultKind.HARNESS, f"could not start the bot: {exc}")
        return session
    _handshake(session, time.monotonic() + handshake_s, max_games, rules or {})
    return session


def _handshake(session: BotSession, deadline: float, max_games: int, rules: dict[str, Any]) -> None:
    poller = zmq.Poller()
    poller.register(session.socket, zmq.POLLIN)
    while True:
        now = time.monotonic()
        if now >= deadline:
            session.fail(FaultKind.TIMEOUT, "no hello within the handshake limit")
            return
        if not poller.poll(min(50.0, (deadline - now) * 1000.0)):
            if session.exited():
                session.fail(FaultKind.CRASH, f"exited before the handshake ({session.exit_description()})")
                return
            continue
        messages = session.receive_all()
        if not messages:
            continue
        raw = messages[0]
        try:
            hello = parse_hello(raw)
        except ProtocolError as exc:
            session.send(make_reject(exc.reason, str(exc)))
            session.fail(FaultKind(exc.code), f"bad hello: {exc}", reply=raw)
            return
        if hello.token != session.token:
            session.send(make_reject("bad_token", "the token is not the one issued to this process"))
            session.fail(FaultKind.PROTOCOL, "hello with a wrong token", reply=raw)
            return
        session.max_games = max(1, min(max_games, hello.max_games))
        session.send(make_welcome(session.max_games, rules=rules))
        session.state = SessionState.READY
        if session.process is not None:
            session.process.freeze()  # until its first request
        log.info("bot %s ready (pid %s, max_games %d, protocol %s)", session.name,
                 session.process.pid if session.process else None, session.max_games, PROTOCOL_MAJOR)
        return
