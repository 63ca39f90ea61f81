"""The socket monitor names a connection by its descriptor, after the fact.

libzmq gives each accepted connection the lowest free descriptor, so a peer that connects and
disconnects over and over leaves a queue of ``ACCEPTED(N)``, ``DISCONNECTED(N)`` events, all
for the same ``N``. When the bot's own link then takes ``N``, every one of those stale
``ACCEPTED(N)`` finds the link behind ``N``. Here the order is made exactly (each connection
is closed on the arena's side before the next one is made, and the bot connects only when
told), so the test does not depend on who wins a race: the bot must be counted once.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from arena.botproc import SandboxMode, load_manifest
from arena.session import MAX_OWN_CONNECTIONS, Launch, SessionState, greet, launch_session
from tests.arena.conftest import BOTFIXTURES
from tests.polling import poll_until

pytestmark = pytest.mark.integration

LATECOMER = load_manifest(BOTFIXTURES / "latecomer")
STALE = MAX_OWN_CONNECTIONS + 4  # stale ACCEPTED events that name the link's descriptor
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


@pytest.fixture
def ctx() -> Iterator[zmq.Context[Any]]:
    context: zmq.Context[Any] = zmq.Context()
    yield context
    context.term()


@pytest.fixture
def late(ctx: zmq.Context[Any], sock_dir: Path, tmp_path: Path) -> Iterator[Launch]:
    """A launched latecomer, waiting for its signal to connect."""
    launch = launch_session(LATECOMER, ctx, socket_dir=sock_dir, run_dir=tmp_path, handshake_s=WAIT_S,
                            sandbox=SandboxMode.FALLBACK)
    process = launch.session.process
    assert process is not None
    assert poll_until(lambda: "latecomer: waiting" in process.stderr_path.read_text(), WAIT_S, 0.01)
    yield launch
    launch.session.close()


@pytest.fixture
def peers() -> Iterator[list[socket.socket]]:
    """``STALE`` unconnected Unix sockets of this process (a peer outside the bot's sandbox)."""
    made = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(STALE)]
    yield made
    for peer in made:
        peer.close()


def test_stale_accepted_events_count_the_bots_link_once(late: Launch, peers: list[socket.socket]) -> None:
    session = late.session
    assert session.path is not None and session.process is not None
    # The peers' own descriptors exist already, so the only one that changes below is the arena's side.
    reused = lowest_free_fd()
    for peer in peers:
        peer.connect(session.path)
        assert poll_until(lambda: is_socket(reused), WAIT_S, 0.001)  # accepted on descriptor `reused`
        peer.shutdown(socket.SHUT_RDWR)
        assert poll_until(lambda: not is_socket(reused), WAIT_S, 0.001)  # closed: `reused` is free again
    os.kill(session.process.pid, signal.SIGUSR1)
    assert poll_until(lambda: is_socket(reused), WAIT_S, 0.001)  # the link took the same descriptor
    greet([late])
    assert session.state is SessionState.READY, session.death and session.death.describe()
    assert session.own_connections == 1
