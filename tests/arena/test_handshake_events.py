"""The connection events queued while a bot shakes hands, in exactly the orders that broke them.

The socket monitor names a connection by its descriptor, after the fact, and libzmq gives
each accepted connection the lowest free descriptor: a peer that connects and disconnects over
and over leaves a queue of ``ACCEPTED(N)``, ``DISCONNECTED(N)``, all for the same ``N``, and
whatever holds ``N`` when one is read is what it finds. Each test here makes its order
exactly (a peer's connection is known to be accepted, or closed, before the next step; the bot
connects only when told), so none depends on who wins a race.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from arena.botproc import SandboxMode, load_manifest
from arena.engine.records import FaultKind
from arena.session import MAX_OWN_CONNECTIONS, RECEIVE_BATCH, BotSession, SessionState, greet, launch_session
from tests.arena.conftest import BOTFIXTURES
from tests.polling import poll_until

pytestmark = pytest.mark.integration

LATECOMER = load_manifest(BOTFIXTURES / "latecomer")
TOO_MANY = MAX_OWN_CONNECTIONS + 4
CHAIN_CAP = 500  # connections the endless peer makes at most (so the old arena failed instead of hanging)
WAIT_S = 10.0


def is_socket(fd: int) -> bool:
    """Whether descriptor ``fd`` of this process is open on a socket (opens no descriptor)."""
    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False


def lowest_free_fd() -> int:
    fd = os.dup(0)
    os.close(fd)
    return fd


def connect_accepted(path: str) -> socket.socket:
    """A bare connection to ``path`` that the arena has accepted (libzmq greets it only then)."""
    peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    peer.settimeout(WAIT_S)
    peer.connect(path)
    peer.recv(1)  # the first byte of libzmq's greeting (or the end, once the arena shut it down)
    return peer


@pytest.fixture
def ctx() -> Iterator[zmq.Context[Any]]:
    context: zmq.Context[Any] = zmq.Context()
    yield context
    context.term()


@pytest.fixture
def latecomer(ctx: zmq.Context[Any], sock_dir: Path, tmp_path: Path) -> Iterator[Callable[..., BotSession]]:
    """Launches a latecomer (with ``extra`` connections of its own) and waits until it waits for its signal."""
    launches: list[BotSession] = []

    def launch(extra: int = 0) -> BotSession:
        manifest = dataclasses.replace(LATECOMER, env={"LATECOMER_EXTRA": str(extra)})
        started = launch_session(manifest, ctx, socket_dir=sock_dir, run_dir=tmp_path / str(len(launches)),
                                 handshake_s=WAIT_S, sandbox=SandboxMode.FALLBACK)
        launches.append(started)
        process = started.process
        assert process is not None
        assert poll_until(lambda: "latecomer: waiting" in process.stderr_path.read_text(), WAIT_S, 0.01)
        return started

    yield launch
    for started in launches:
        started.close()


def say_hello(session: BotSession) -> None:
    """Signal the latecomer and wait until its hello waits at the arena (read by nobody yet)."""
    assert session.process is not None
    os.kill(session.process.pid, signal.SIGUSR1)
    assert session.socket.poll(int(WAIT_S * 1000), zmq.POLLIN)


@pytest.fixture
def peers() -> Iterator[list[socket.socket]]:
    """Unix sockets of this process (a peer outside the bot's sandbox), closed at the end."""
    made: list[socket.socket] = []
    yield made
    for peer in made:
        peer.close()


def test_stale_accepted_events_count_the_bots_link_once(latecomer: Callable[..., BotSession],
                                                       peers: list[socket.socket]) -> None:
    session = latecomer()
    assert session.path is not None and session.process is not None
    peers += [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(TOO_MANY)]
    reused = lowest_free_fd()  # the peers' own descriptors exist already: only the arena's side changes below
    for peer in peers:
        peer.connect(session.path)
        assert poll_until(lambda: is_socket(reused), WAIT_S, 0.001)  # accepted on descriptor `reused`
        peer.shutdown(socket.SHUT_RDWR)
        assert poll_until(lambda: not is_socket(reused), WAIT_S, 0.001)  # closed: `reused` is free again
    os.kill(session.process.pid, signal.SIGUSR1)
    assert poll_until(lambda: is_socket(reused), WAIT_S, 0.001)  # the link took the same descriptor
    greet([session])
    assert session.state is SessionState.READY, session.death and session.death.describe()
    assert session.own_connections == 1


def test_a_peer_connecting_faster_than_the_arena_reads_cannot_hold_up_the_hello(
        latecomer: Callable[..., BotSession], peers: list[socket.socket], monkeypatch: pytest.MonkeyPatch) -> None:
    """For each connection the arena looks at, the peer has made one more (accepted, so its
    event is queued): reading the queue until it is empty ends only once nobody can connect."""
    session = latecomer()
    assert session.path is not None
    path = session.path
    refused: list[OSError] = []
    look = BotSession._admit

    def look_and_connect_again(self: BotSession, fd: int) -> None:
        look(self, fd)
        if len(peers) < CHAIN_CAP and not refused:
            try:
                peers.append(connect_accepted(path))
            except OSError as exc:
                refused.append(exc)

    monkeypatch.setattr(BotSession, "_admit", look_and_connect_again)
    say_hello(session)
    peers.append(connect_accepted(path))
    greet([session])
    assert session.state is SessionState.READY, session.death and session.death.describe()
    assert len(peers) < CHAIN_CAP and refused  # the path went before the arena read the rest of the queue
    assert session.own_connections == 1


def test_own_connections_queued_behind_the_hello_still_count(latecomer: Callable[..., BotSession],
                                                            peers: list[socket.socket]) -> None:
    """More foreign connections than one read takes come first, then the bot's own flood and
    its hello: the flood is read only with the hello, and is still the bot's fault."""
    session = latecomer(extra=TOO_MANY)
    assert session.path is not None
    peers += [connect_accepted(session.path) for _ in range(RECEIVE_BATCH + 6)]
    say_hello(session)
    greet([session])
    assert session.state is SessionState.DEAD and session.death is not None
    assert session.death.kind is FaultKind.PROTOCOL and "before its hello" in session.death.detail
    assert session.own_connections == TOO_MANY + 1
