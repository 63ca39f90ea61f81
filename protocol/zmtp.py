"""A ZeroMQ DEALER link in the standard library: ZMTP 3.0, NULL mechanism, one connection.

The bot SDK's link to the arena. libzmq moves every message through its I/O thread: per
message a wakeup of that thread and a hand-over between threads, which cost a random bot
about a sixth of its CPU (``bench/bot_sdk.py``). Here the SDK's own thread reads and writes
the socket: one ``recv`` system call takes every queued message, and one write sends the
replies held back (``hold``, ``flush``), so the SDK answers the requests that came together
with one write, which wakes the arena once instead of once per reply. The arena's ROUTER
cannot tell this peer from a libzmq DEALER: the same greeting, the same READY command
(``Socket-Type`` ``DEALER``, ``Identity`` the routing id) and the same frames (ZMTP 3.0,
ZeroMQ RFC 23).

Only what a bot needs: ``ipc://`` (a path, or ``@name`` in the abstract namespace) and
``tcp://host:port`` endpoints, a blocking receive that gives up after ``recv_timeout_s``
(``TimeoutError``), a send that gives up after ``send_timeout_s`` (``TimeoutError``), each
frame of a multi-frame message received as one message (as a DEALER's ``recv`` gives them),
commands after the handshake ignored. A closed connection, a broken stream, or a frame over
``max_bytes`` is a ``ProtocolError`` with code ``disconnect`` (the arena never reconnects a
link: its socket's path is gone once the hello is read).
"""

from __future__ import annotations

import socket
import struct
import time

from .errors import DISCONNECT, ProtocolError

# Signature, version 3.0, mechanism NULL, as-server 0, filler: 64 bytes.
GREETING = b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" + bytes(31)
_LONG, _COMMAND = 2, 4  # frame flags (a MORE frame is received as a message of its own)
_CONNECT_TIMEOUT_S = 1.0
_READ_BYTES = 1 << 16


def _timeval(seconds: float) -> bytes:
    whole = int(seconds)
    return struct.pack("ll", whole, int((seconds - whole) * 1e6))


def _property(name: bytes, value: bytes) -> bytes:
    return bytes((len(name),)) + name + len(value).to_bytes(4, "big") + value


def _frame(body: bytes, flags: int = 0) -> bytes:
    size = len(body)
    if size < 256:
        return bytes((flags, size)) + body
    return bytes((flags | _LONG,)) + size.to_bytes(8, "big") + body


def parse_endpoint(endpoint: str) -> str | tuple[str, int]:
    """``endpoint`` as a Unix socket's address or a TCP (host, port); ``ValueError`` if it is
    not one we speak."""
    transport, sep, address = endpoint.partition("://")
    if sep and transport == "ipc" and address:
        return "\0" + address[1:] if address.startswith("@") else address
    if sep and transport == "tcp":
        host, colon, port = address.rpartition(":")
        host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        if colon and host and port.isdigit() and 0 < int(port) < 65536:
            return host, int(port)
    raise ValueError("not an ipc://PATH or tcp://HOST:PORT endpoint")


class Dealer:
    """One connection to a ZeroMQ ROUTER (or any ZMTP 3 peer), as a DEALER with ``routing_id``."""

    def __init__(self, endpoint: str, routing_id: bytes, *, max_bytes: int, recv_timeout_s: float,
                 send_timeout_s: float) -> None:
        if not 1 <= len(routing_id) <= 255:
            raise ValueError("a routing id has 1 to 255 bytes")
        self.address = parse_endpoint(endpoint)
        self.routing_id = routing_id
        self.max_bytes = max_bytes
        self.recv_timeout_s = recv_timeout_s
        self.send_timeout_s = send_timeout_s
        self._sock: socket.socket | None = None
        self._buf = bytearray()
        self._pos = 0  # where the next frame starts in _buf
        self._held: list[bytes] = []  # frames ``hold`` kept back, for one write

    def connect(self) -> None:
        """Connect and do the ZMTP handshake. ``OSError`` when nobody listens (yet);
        ``TimeoutError`` or ``ProtocolError`` when the peer does not complete the handshake."""
        address = self.address
        if isinstance(address, str):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.settimeout(_CONNECT_TIMEOUT_S)  # a full backlog is an error at once, not a wait for ever
                sock.connect(address)
            except BaseException:
                sock.close()
                raise
        else:  # every address the name has, IPv4 or IPv6
            sock = socket.create_connection(address, _CONNECT_TIMEOUT_S)
        try:
            sock.settimeout(None)  # blocking, bounded by the kernel's timeouts (no poll per call)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _timeval(self.recv_timeout_s))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(self.send_timeout_s))
            if not isinstance(address, str):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except BaseException:
            sock.close()
            raise
        self.close()
        self._sock, self._buf, self._pos = sock, bytearray(), 0
        self._handshake()

    def _handshake(self) -> None:
        sock = self._sock
        assert sock is not None
        deadline = time.monotonic() + self.send_timeout_s
        self._write(GREETING)
        while len(self._buf) < len(GREETING):
            self._fill(deadline)
        peer = bytes(self._buf[:len(GREETING)])
        del self._buf[:len(GREETING)]
        if peer[0] != 0xFF or not peer[9] & 1 or peer[10] < 3 or peer[12:32].rstrip(b"\x00") != b"NULL":
            raise ProtocolError(DISCONNECT, "the peer does not speak ZMTP 3 with the NULL mechanism")
        self._write(_frame(b"\x05READY" + _property(b"Socket-Type", b"DEALER")
                           + _property(b"Identity", self.routing_id), _COMMAND))
        while (command := self._next_frame(commands=True)) is None:
            self._fill(deadline)
        if not command.startswith(b"\x05READY"):
            raise ProtocolError(DISCONNECT, f"the peer refused the handshake: {command[1:40]!r}")

    def _fill(self, deadline: float | None = None) -> None:
        """Read what the socket has (waiting up to the receive timeout) into the buffer."""
        sock = self._sock
        if sock is None:
            raise ProtocolError(DISCONNECT, "not connected")
        try:
            chunk = sock.recv(_READ_BYTES)
        except BlockingIOError:  # SO_RCVTIMEO ran out
            if deadline is None or time.monotonic() > deadline:
                raise TimeoutError("nothing received") from None
            return
        except OSError as exc:
            raise ProtocolError(DISCONNECT, f"the connection broke: {exc}") from None
        if not chunk:
            raise ProtocolError(DISCONNECT, "the peer closed the connection")
        if self._pos:
            del self._buf[:self._pos]
            self._pos = 0
        self._buf += chunk

    def _next_frame(self, commands: bool = False) -> bytes | None:
        """The next whole frame's body in the buffer (messages, or commands if ``commands``),
        skipping the other kind; None when no whole one is there yet."""
        buf = self._buf
        while True:
            pos = self._pos
            avail = len(buf) - pos
            if avail < 2:
                return None
            flags = buf[pos]
            if flags & _LONG:
                if avail < 9:
                    return None
                size, start = int.from_bytes(buf[pos + 1:pos + 9], "big"), pos + 9
            else:
                size, start = buf[pos + 1], pos + 2
            if size > self.max_bytes:
                raise ProtocolError(DISCONNECT, f"a frame of {size} bytes is over the {self.max_bytes} cap")
            end = start + size
            if end > len(buf):
                return None
            self._pos = end
            if bool(flags & _COMMAND) == commands:
                return bytes(buf[start:end])

    def recv(self) -> bytes:
        """The next message frame; ``TimeoutError`` after ``recv_timeout_s`` without one."""
        while (frame := self._next_frame()) is None:
            self._fill()
        return frame

    def buffered(self) -> bytes | None:
        """The next message frame if a whole one was received already, else None (no wait)."""
        return self._next_frame()

    def send(self, data: bytes) -> None:
        """Send ``data`` as one message, after any held back; ``TimeoutError`` if the peer read
        nothing for ``send_timeout_s``."""
        self.hold(data)
        self.flush()

    def hold(self, data: bytes) -> None:
        """Keep the message ``data`` back, to leave with the next ``send`` or ``flush`` in one write."""
        self._held.append(_frame(data))

    @property
    def holding(self) -> bool:
        """Whether messages are held back."""
        return bool(self._held)

    def flush(self) -> None:
        """Send the messages held back, in order, in one write (``TimeoutError`` as ``send``)."""
        held = self._held
        if held:
            self._held = []
            self._write(held[0] if len(held) == 1 else b"".join(held))

    def _write(self, data: bytes) -> None:
        sock = self._sock
        if sock is None:
            raise ProtocolError(DISCONNECT, "not connected")
        try:
            sock.sendall(data, socket.MSG_NOSIGNAL)  # a closed peer is an error, not a SIGPIPE
        except BlockingIOError:  # SO_SNDTIMEO ran out
            raise TimeoutError("the peer reads nothing") from None
        except OSError as exc:
            raise ProtocolError(DISCONNECT, f"the connection broke: {exc}") from None

    def close(self) -> None:
        """Close the connection (what is sent is delivered; nothing more is read)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
