"""protocol.zmtp, the SDK's DEALER link, against a real libzmq ROUTER and against a scripted peer."""

from __future__ import annotations

import io
import select
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from protocol import ProtocolError
from protocol.client import EXIT_ARENA_GONE, Bot, Settings, _Session
from protocol.zmtp import GREETING, Dealer, parse_endpoint

from .conftest import WAIT_MS, FakeArena

pytestmark = pytest.mark.integration


def dealer(endpoint: str, max_bytes: int = 1 << 16, recv_timeout_s: float = WAIT_MS / 1000) -> Dealer:
    return Dealer(endpoint, b"tok-zmtp", max_bytes=max_bytes, recv_timeout_s=recv_timeout_s, send_timeout_s=5.0)


@pytest.fixture
def link(arena: FakeArena) -> Iterator[Dealer]:
    connected = dealer(arena.endpoint)
    connected.connect()
    try:
        yield connected
    finally:
        connected.close()


def test_a_router_sees_the_routing_id_and_both_sides_get_every_message_in_order(
    arena: FakeArena, link: Dealer
) -> None:
    link.send(b"hello")
    ident, data = arena.recv()
    assert (ident, data) == (b"tok-zmtp", b"hello")
    sizes = [0, 1, 255, 256, 5000, 65_536]  # short and long frames, up to the cap
    for size in sizes:
        arena.send(ident, bytes([size % 251]) * size)  # queued together: read in few system calls
    assert [link.recv() for _ in sizes] == [bytes([size % 251]) * size for size in sizes]
    link.send(b"x" * 300)
    assert arena.recv() == (ident, b"x" * 300)


def test_each_frame_of_a_multi_frame_message_is_received_as_a_message(arena: FakeArena, link: Dealer) -> None:
    link.send(b"hello")
    ident, _ = arena.recv()
    arena.sock.send_multipart([ident, b"first", b"second"])
    assert (link.recv(), link.recv()) == (b"first", b"second")


def test_silence_is_a_timeout_and_a_closed_router_a_disconnect(ipc_dir: Path) -> None:
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.setsockopt(zmq.LINGER, 0)
    router.bind(f"ipc://{ipc_dir}/closing.sock")
    quiet = dealer(f"ipc://{ipc_dir}/closing.sock", recv_timeout_s=0.05)
    try:
        quiet.connect()
        with pytest.raises(TimeoutError):
            quiet.recv()
        router.close(0)
        with pytest.raises(ProtocolError) as err:
            for _ in range(WAIT_MS // 50):  # the close reaches us after a timeout or two
                try:
                    quiet.recv()
                except TimeoutError:
                    continue
        assert err.value.code == "disconnect" and "closed the connection" in str(err.value)
    finally:
        quiet.close()
        router.close(0)
        ctx.term()


def test_a_frame_over_the_cap_is_a_disconnect(arena: FakeArena) -> None:
    small = dealer(arena.endpoint, max_bytes=1000)
    small.connect()
    small.send(b"hello")
    ident, _ = arena.recv()
    arena.send(ident, b"y" * 1001)
    with pytest.raises(ProtocolError) as err:
        small.recv()
    assert err.value.code == "disconnect" and "over the 1000 cap" in str(err.value)
    small.close()


def test_nobody_listening_is_an_os_error(ipc_dir: Path) -> None:
    with pytest.raises(OSError):
        dealer(f"ipc://{ipc_dir}/nobody.sock").connect()


def test_a_listener_that_accepts_nothing_is_an_os_error_not_a_hang(ipc_dir: Path) -> None:
    """A Unix socket whose backlog is full (an arena that stopped accepting) fails the connect at
    once; the SDK then tries again until its idle timeout, instead of blocking in connect for ever."""
    path = str(ipc_dir / "stuck.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen(0)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as first:
            first.connect(path)  # the one place in the backlog
            link = dealer(f"ipc://{path}")
            with pytest.raises(OSError):
                link.connect()
            link.close()


def test_tcp_endpoints_work_too() -> None:
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.setsockopt(zmq.LINGER, 0)
    try:
        port = router.bind_to_random_port("tcp://127.0.0.1")
        link = dealer(f"tcp://127.0.0.1:{port}")
        link.connect()
        link.send(b"over tcp")
        assert router.poll(WAIT_MS) and router.recv_multipart() == [b"tok-zmtp", b"over tcp"]
        link.close()
    finally:
        router.close(0)
        ctx.term()


@pytest.mark.parametrize(
    ("endpoint", "parsed"),
    [
        ("ipc:///tmp/a.sock", "/tmp/a.sock"),
        ("ipc://@arena", "\0arena"),
        ("tcp://localhost:5555", ("localhost", 5555)),
        ("tcp://[::1]:7", ("::1", 7)),
    ],
)
def test_endpoints(endpoint: str, parsed: object) -> None:
    assert parse_endpoint(endpoint) == parsed


@pytest.mark.parametrize("endpoint", ["nowhere", "ipc://", "inproc://x", "tcp://host", "tcp://:5", "tcp://h:0",
                                      "tcp://h:99999", "tcp://h:port"])
def test_bad_endpoints_are_value_errors(endpoint: str) -> None:
    with pytest.raises(ValueError):
        parse_endpoint(endpoint)


def frame(body: bytes, flags: int = 0) -> bytes:
    """A short ZMTP frame (``flags`` 4: a command)."""
    assert len(body) < 256
    return bytes((flags, len(body))) + body


READY = frame(b"\x05READY\x0bSocket-Type\x00\x00\x00\x06ROUTER", 4)


class ScriptedPeer:
    """A listening Unix socket whose one connection, once the dealer's greeting is read, gets
    ``script`` (each item its own write); then the peer hangs up, or with ``hold`` reads what
    comes (``received``) until the dealer closes."""

    def __init__(self, path: Path, script: list[bytes], hold: bool = False) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(1)
        self.endpoint = f"ipc://{path}"
        self.received = b""
        self.thread = threading.Thread(target=self._serve, args=(script, hold), daemon=True)
        self.thread.start()

    def _serve(self, script: list[bytes], hold: bool) -> None:
        conn, _ = self.listener.accept()
        conn.settimeout(WAIT_MS / 1000)
        with conn:
            while len(self.received) < len(GREETING):
                self.received += conn.recv(4096)
            for chunk in script:
                conn.sendall(chunk)
            while hold and (data := conn.recv(4096)):
                self.received += data

    def close(self) -> None:
        self.thread.join(WAIT_MS / 1000)
        self.listener.close()


def test_split_frames_and_commands_after_the_handshake(ipc_dir: Path) -> None:
    long_frame = b"\x02" + (300).to_bytes(8, "big") + b"z" * 300
    script = [GREETING[:10], GREETING[10:] + READY, b"\x00\x03ab", b"c" + long_frame[:5], long_frame[5:],
              frame(b"\x04PING", 4) + frame(b"ok")]  # a command in between is skipped
    peer = ScriptedPeer(ipc_dir / "peer.sock", script, hold=True)
    link = dealer(peer.endpoint)
    try:
        link.connect()
        assert (link.recv(), link.recv(), link.recv()) == (b"abc", b"z" * 300, b"ok")
    finally:
        link.close()
        peer.close()
    assert peer.received[:len(GREETING)] == GREETING
    ready = peer.received[len(GREETING):]
    assert ready == frame(b"\x05READY\x0bSocket-Type\x00\x00\x00\x06DEALER\x08Identity\x00\x00\x00\x08tok-zmtp", 4)


@pytest.mark.parametrize(
    ("script", "error"),
    [
        ([b"GET / HTTP/1.1\r\n" * 4], "does not speak ZMTP 3"),
        ([GREETING[:10] + b"\x02" + GREETING[11:]], "does not speak ZMTP 3"),
        ([GREETING + frame(b"\x05ERROR\x06denied", 4)], "refused the handshake"),
        ([GREETING[:40]], "closed the connection"),
    ],
    ids=["not zmtp", "zmtp 2", "error command", "cut short"],
)
def test_a_peer_that_does_not_complete_the_handshake(ipc_dir: Path, script: list[bytes], error: str) -> None:
    peer = ScriptedPeer(ipc_dir / "peer.sock", script, hold=error != "closed the connection")
    link = dealer(peer.endpoint)
    try:
        with pytest.raises(ProtocolError, match=error) as err:
            link.connect()
        assert err.value.code == "disconnect"
    finally:
        link.close()
        peer.close()


def session(endpoint: str, idle_timeout_s: float) -> _Session:
    return _Session(Bot, Settings(endpoint, "tok-zmtp", 1, idle_timeout_s), "late", "1", io.StringIO())


def test_the_sdk_keeps_trying_to_connect_until_the_arena_listens(ipc_dir: Path) -> None:
    endpoint = f"ipc://{ipc_dir}/late.sock"
    waiting = session(endpoint, 0.0)
    link = dealer(endpoint)
    outcome: list[int | None] = []
    connecting = threading.Thread(target=lambda: outcome.append(waiting.connect(link)))
    connecting.start()  # it tries at once, finds nobody, and tries again every 0.1 s
    arena = FakeArena(endpoint)
    try:
        connecting.join(WAIT_MS / 1000)
        assert outcome == [None]
        link.send(b"late hello")
        assert arena.recv() == (b"tok-zmtp", b"late hello")
    finally:
        link.close()
        arena.close()


def test_the_sdk_gives_up_connecting_after_the_idle_timeout(ipc_dir: Path) -> None:
    waiting = session(f"ipc://{ipc_dir}/never.sock", 0.2)
    assert waiting.connect(dealer(f"ipc://{ipc_dir}/never.sock")) == EXIT_ARENA_GONE
    assert "nothing from the arena for 0.2 s; exiting" in waiting.err.getvalue()  # type: ignore[attr-defined]


def _connected_pair(ipc_dir: Path) -> tuple[Dealer, socket.socket]:
    """A connected dealer and the raw peer connection, the handshake's bytes read off it."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(ipc_dir / "raw.sock"))
    listener.listen(1)
    accepted: list[socket.socket] = []

    def serve() -> None:
        conn, _ = listener.accept()
        conn.sendall(GREETING + READY)
        accepted.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    link = dealer(f"ipc://{ipc_dir / 'raw.sock'}")
    link.connect()
    thread.join(WAIT_MS / 1000)
    listener.close()
    conn = accepted[0]
    conn.settimeout(WAIT_MS / 1000)
    handshake = len(GREETING) + len(frame(b"\x05READY\x0bSocket-Type\x00\x00\x00\x06DEALER\x08Identity\x00\x00\x00\x08tok-zmtp", 4))
    got = b""
    while len(got) < handshake:
        got += conn.recv(handshake - len(got))
    return link, conn


def _readable(conn: socket.socket) -> bool:
    return bool(select.select([conn], [], [], 0)[0])


def test_held_messages_leave_in_order_with_the_next_flush_or_send(ipc_dir: Path) -> None:
    link, conn = _connected_pair(ipc_dir)
    try:
        link.hold(b"one")
        link.hold(b"two")
        assert link.holding
        assert not _readable(conn)  # a unix socket has what a write wrote once the write returns
        link.flush()
        assert not link.holding
        assert conn.recv(4096) == frame(b"one") + frame(b"two")
        link.hold(b"three")
        link.send(b"four")
        assert conn.recv(4096) == frame(b"three") + frame(b"four")
        link.flush()  # nothing held: nothing written
        assert not _readable(conn)
    finally:
        link.close()
        conn.close()


def test_buffered_gives_the_frames_already_read_and_never_waits(ipc_dir: Path) -> None:
    link, conn = _connected_pair(ipc_dir)
    try:
        assert link.buffered() is None  # nothing read yet, and no wait for it
        conn.sendall(frame(b"x") + frame(b"y") + frame(b"z")[:2])  # the third frame cut short
        assert link.recv() == b"x"
        assert link.buffered() == b"y"
        assert link.buffered() is None  # "z" is not whole yet
        conn.sendall(b"z")
        assert link.recv() == b"z"
    finally:
        link.close()
        conn.close()
