"""A bot session: one sandboxed bot process and the arena's ZeroMQ link to it.

A session comes in two steps: ``launch_session`` starts the process, and its handshake takes
the ``hello`` within the handshake limit and answers ``welcome`` or a typed ``reject``; any
failure kills the process and leaves the session dead with the fault that killed it. The
handshake never waits by itself (``BotSession.shake`` is one step of it, taken whenever the
link or its monitor has something), so the conductor greets new processes in the same poll
loop that plays the matches in progress, and nobody's clock runs while it would wait for
somebody else's hello; ``greet`` is that loop for sessions alone. Each bot gets its own
limit, counted from its own start.

Each session binds its own ROUTER on its own ``ipc://`` path, and exactly one connection to
it is the bot's **link**: the one whose routing id is the one-time token and that sent the
accepted ``hello``. Nothing another peer does can cost the bot anything:

- frames from any other routing id are dropped and counted (``foreign_frames``);
- a connection from outside the bot's sandbox is closed as soon as it is accepted (where the
  arena may look at the peer's process: always as root), and so is every connection accepted
  after the hello; once the hello is read the socket's path is removed, so nobody can
  connect any more while the link stays up, and only then are the events queued ahead of the
  hello handled (a peer that kept connecting would otherwise keep that queue from emptying);
- more than ``MAX_OWN_CONNECTIONS`` connections from the bot's own sandbox before its hello is
  a ``protocol`` fault of that bot (it floods its own link). The monitor names a connection
  only by its descriptor, read after the fact, and libzmq gives the next connection the
  descriptor a closed one freed: a peer that connects and disconnects over and over queues
  ``ACCEPTED(N)`` after ``ACCEPTED(N)``, and each one finds whatever holds ``N`` when it is
  read, maybe the bot's link. So a connection is known by its socket's inode and counts once,
  however many events name it: a bot is charged only for connections it really opened
  (counting those whose events are read only with its hello);
- only the link's own disconnect is a fault: the socket monitor names the descriptor of the
  connection that closed, and the link's descriptor is known from its ``hello``;
- each connection queues at most ``_RCVHWM`` messages (a flooding peer then blocks itself),
  readers take at most ``RECEIVE_BATCH`` messages per call (fair polling), and the monitor's
  queue is unbounded on the arena's side, because libzmq's I/O thread blocks when a monitor
  pipe is full (it is bounded by the connections the rules above let in).
"""

from __future__ import annotations

import itertools
import math
import logging
import os
import resource
import secrets
import socket
import struct
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import zmq

from arena.botproc import BotProcess, Limits, Manifest, SandboxMode, start_bot
from arena.botproc.view import make_link_folder
from arena.engine.records import Fault, FaultKind
from arena.errors import ArenaError
from arena.faults import MAX_STDERR_CHARS, truncate
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
RECEIVE_BATCH = 64  # messages (or connection events) handled per link and call: one backlog cannot starve the rest
MAX_OWN_CONNECTIONS = 16  # connections a bot's sandbox may open to its endpoint before its hello
_RCVHWM = 16  # messages queued per connection before libzmq stops reading it (the sender then blocks)
_EVENTS = zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED
_MORE_NOBLOCK = zmq.SNDMORE | zmq.NOBLOCK  # combined once: a flag union costs two enum calls
# pyzmq's own methods under its Python wrappers (whose routing_id, group and option names are unused here)
_SEND = zmq.backend.Socket.send  # a quarter less a message
_GET = zmq.backend.Socket.get
_RCVMORE = int(zmq.RCVMORE)
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
# A socket monitor's event, its first frame: the event (16 bits) and its value, here a descriptor
# (32 bits). Read here: pyzmq's parser lives in a module that imports asyncio (20 ms of start-up).
_MONITOR_EVENT = struct.Struct("=hi")
_monitor_ids = itertools.count()

SlowStep = Callable[[], AbstractContextManager[None]]  # what a slow step of the harness (a kill, a start) runs inside


def raise_descriptor_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit; the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as exc:
            log.info("could not raise the open-files limit from %d to %d: %s", soft, hard, exc)
    return soft


class SessionState(Enum):
    """A session's life: it is ready to play until it dies or is closed."""

    STARTING = "starting"
    READY = "ready"
    DEAD = "dead"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class Handshake:
    """What a launched bot's handshake needs: when its hello must have come, the most games the
    arena grants it, and the rules its ``welcome`` carries."""

    deadline: float  # time.monotonic()
    max_games: int
    rules: dict[str, Any]


class BotSession:
    """One bot process, its link and its bookkeeping; close() ends both (idempotent)."""

    def __init__(self, name: str, manifest: Manifest, ctx: zmq.Context[Any], endpoint: str,
                 handshake: Handshake, *, pinned: bool = False) -> None:
        self.name = name
        self.manifest = manifest
        self.endpoint = endpoint
        self.path = _ipc_path(endpoint)
        self.token = secrets.token_hex(16)
        self.identity = self.token.encode()
        self.state = SessionState.STARTING
        self.handshake = handshake
        self.process: BotProcess | None = None
        self.max_games = 1
        self.pinned = pinned  # runs on its worker's own cores: it serves lock-step play only
        self.seq = 0
        self.dropped_replies = 0
        self.foreign_frames = 0  # frames from other routing ids, dropped
        self.foreign_connections = 0  # connections closed: from outside the sandbox, or after the hello
        self._own_sockets: set[int] = set()  # inodes of the connections from its own sandbox before its hello
        self.link_fd: int | None = None  # the descriptor of the link's connection, known from the hello
        self.death: Fault | None = None
        self.served_pairs: set[Hashable] = set()
        self.load = 0  # matches this session is in right now
        self.outstanding = 0  # requests sent and not yet answered or faulted
        self._cpu_round = -1  # the conductor's poll round in which ``_cpu`` was read
        self._cpu_answered = False  # whether that reading was taken for an answer
        self._cpu: int | None = None
        self.socket: zmq.Socket[bytes] = ctx.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.ROUTER_MANDATORY, 1)
        self.socket.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        self.socket.setsockopt(zmq.RCVHWM, _RCVHWM)
        address = f"inproc://arena-link-monitor-{next(_monitor_ids)}"
        self.socket.monitor(address, _EVENTS)
        self.monitor: zmq.Socket[bytes] = ctx.socket(zmq.PAIR)
        self.monitor.setsockopt(zmq.LINGER, 0)
        self.monitor.setsockopt(zmq.RCVHWM, 0)  # unbounded: see the module's docstring
        self.monitor.connect(address)
        self.socket.bind(endpoint)

    def __repr__(self) -> str:
        pid = self.process.pid if self.process else None
        return f"<BotSession {self.name} pid={pid} {self.state.value}>"

    @property
    def own_connections(self) -> int:
        """Distinct connections from the bot's own sandbox seen before its hello."""
        return len(self._own_sockets)

    @property
    def alive(self) -> bool:
        """Whether the session can take requests."""
        return self.state is SessionState.READY

    @property
    def starting(self) -> bool:
        """Whether its handshake is still going on."""
        return self.state is SessionState.STARTING

    def shake(self, now: float, around_kill: SlowStep = nullcontext) -> bool:
        """One step of the handshake, without waiting: the connection events, then the hello if
        it came (welcome or reject); a bot that flooded its link, exited, or is past its
        deadline without a hello dies with that fault, its kill run inside ``around_kill`` (the
        conductor's: the clocks stop and the bots thinking are frozen through it). Whether it
        is still starting."""
        if not self.starting:
            return False
        self.link_lost()
        if _flooded(self, around_kill):
            return False
        for frame in self._messages(RECEIVE_BATCH, copy=False):
            self._answer_hello(frame, around_kill)
            return False
        if self.exited():
            self.fail(FaultKind.CRASH, f"exited before the handshake ({self.exit_description()})",
                      around_kill=around_kill)
        elif now >= self.handshake.deadline:
            self.fail(FaultKind.TIMEOUT, "no hello within the handshake limit", around_kill=around_kill)
        return self.starting

    def _answer_hello(self, frame: zmq.Frame, around_kill: SlowStep) -> None:
        """Welcome or reject the first message of the link."""
        raw = frame.bytes
        try:
            hello = parse_hello(raw)
        except ProtocolError as exc:
            self.send(make_reject(exc.reason, str(exc)))
            self.fail(FaultKind(exc.code), f"bad hello: {exc}", reply=raw, around_kill=around_kill)
            return
        if hello.token != self.token:
            self.send(make_reject("bad_token", "the token is not the one issued to this process"))
            self.fail(FaultKind.PROTOCOL, "hello with a wrong token", reply=raw, around_kill=around_kill)
            return
        self.open_link(int(frame.get(zmq.SRCFD)))
        if _flooded(self, around_kill):  # counted among the events that were queued behind the hello
            return
        self.max_games = max(1, min(self.handshake.max_games, hello.max_games))
        self.send(make_welcome(self.max_games, rules=self.handshake.rules))
        self.state = SessionState.READY
        if self.process is not None:
            self.process.freeze()  # until its first request
        log.info("bot %s ready (pid %s, max_games %d, protocol %s)", self.name,
                 self.process.pid if self.process else None, self.max_games, PROTOCOL_MAJOR)

    def next_seq(self) -> int:
        """The next request number on this link (unique and increasing)."""
        self.seq += 1
        return self.seq

    def send(self, payload: bytes) -> bool:
        """Send one message to the bot; False if the link could not take it."""
        try:
            # send_multipart's two frames without its per-call checks (the conductor's hot path)
            _SEND(self.socket, self.identity, _MORE_NOBLOCK)
            _SEND(self.socket, payload, zmq.NOBLOCK)
            return True
        except zmq.ZMQError as exc:
            log.info("send to %s failed: %s", self, exc)
            return False

    def begin_request(self, round_: int) -> int | None:
        """A request is about to be sent in the conductor's poll round ``round_``: thaw the bot;
        its CPU nanoseconds so far (a reading already taken in this round stands)."""
        self.outstanding += 1
        if self.process is None:
            return None
        self.process.thaw()
        if round_ != self._cpu_round:
            self._read_cpu(round_, answered=False)
        return self._cpu

    def end_request(self, round_: int) -> int | None:
        """A request was answered or faulted in poll round ``round_``; the bot's CPU nanoseconds so
        far. Read again unless an answer of this round was read already: a request sent earlier
        in the round may be answered in it, and its CPU is the bot's since that send.

        The caller freezes the bot with ``freeze_if_idle`` once it owes nothing, before anything
        that may wait: a bot asked again at once is not frozen and thawed in between.
        """
        self.outstanding = max(0, self.outstanding - 1)
        if self.process is None:
            return None
        if round_ != self._cpu_round or not self._cpu_answered:
            self._read_cpu(round_, answered=True)
        return self._cpu

    def freeze_if_idle(self) -> None:
        """Freeze the bot if it owes no answer in any game (no thinking on the opponent's time)."""
        if self.outstanding == 0 and self.process is not None:
            self.process.freeze()

    @property
    def thinking(self) -> bool:
        """Whether the bot is thawed for requests it has not answered yet."""
        return self.outstanding > 0 and self.process is not None and self.alive

    def pause(self) -> None:
        """Freeze a thinking bot while the arena's clocks are stopped (``resume`` thaws it)."""
        if self.process is not None:
            self.process.freeze()

    def resume(self) -> None:
        """Thaw a bot that ``pause`` froze, if it still owes answers and lives."""
        if self.thinking:
            assert self.process is not None
            self.process.thaw()

    def _read_cpu(self, round_: int, *, answered: bool) -> None:
        assert self.process is not None
        self._cpu_round, self._cpu_answered, self._cpu = round_, answered, self.process.cpu_ns()

    def receive(self, limit: int = RECEIVE_BATCH) -> list[bytes]:
        """The link's messages among the next ``limit`` waiting (frames from other routing ids are dropped)."""
        return list(self._messages(limit, copy=True))

    def _messages(self, limit: int, *, copy: bool) -> Iterator[Any]:
        """The link's payloads (bytes, or ``zmq.Frame`` without ``copy``) among the next ``limit``
        messages; the others are dropped and counted."""
        sock = self.socket
        for _ in range(limit):
            try:
                identity = sock.recv(zmq.NOBLOCK)
            except zmq.Again:
                return
            payload = sock.recv(zmq.NOBLOCK, copy=copy)  # a ROUTER's identity frame always has one after it
            if identity == self.identity and not _GET(sock, _RCVMORE):
                yield payload
                continue
            while _GET(sock, _RCVMORE):  # the rest of a multipart message, without copying it
                sock.recv(zmq.NOBLOCK, copy=False)
            if identity == self.identity:
                self.dropped_replies += 1  # not one frame: the bot broke the envelope
            else:
                self.foreign_frames += 1
                if _power_of_ten(self.foreign_frames):
                    log.debug("link of %s: %d frames from other routing ids dropped", self.name, self.foreign_frames)

    def link_lost(self, limit: int | None = RECEIVE_BATCH) -> bool:
        """Handle up to ``limit`` (None: all) connection events; True if the link itself closed.

        An accepted connection is closed at once if it came from outside the bot's sandbox or
        after the hello, and otherwise counted in ``own_connections``.
        """
        lost = False
        handled = 0
        while limit is None or handled < limit:
            try:
                event, fd = _MONITOR_EVENT.unpack(self.monitor.recv_multipart(zmq.NOBLOCK)[0])
            except zmq.Again:
                break
            handled += 1
            if event == zmq.EVENT_ACCEPTED:
                if fd != self.link_fd:
                    self._admit(fd)
            elif fd == self.link_fd:
                lost = True
        return lost

    def _admit(self, fd: int) -> None:
        if self.path is None:
            return
        conn = _connection(fd, self.path)
        if conn is None:  # closed already (its descriptor now names something else)
            return
        with conn:
            own = self.process.owns(_peer_pid(conn)) if self.process is not None else False
            if self.link_fd is None and own is not False:
                if own:  # unknown (no right to look): neither closed nor counted
                    self._own_sockets.add(os.fstat(conn.fileno()).st_ino)  # once, however many events name it
                return
            self.foreign_connections += 1
            log.debug("link of %s: closed connection %d (%s)", self.name, fd,
                      "after the hello" if self.link_fd is not None else "not from its sandbox")
            try:
                conn.shutdown(socket.SHUT_RDWR)  # libzmq sees the end and closes its descriptor
            except OSError:
                pass

    def open_link(self, fd: int) -> None:
        """The hello came on connection ``fd``: it is the link; nobody else can connect now,
        and the connection events queued before it are handled (an earlier user of ``fd``'s)."""
        if self.path is not None:
            try:
                os.unlink(self.path)  # first: a peer connecting faster than the queue drains would never let it empty
            except OSError:
                pass
        self.link_lost(limit=None)
        self.link_fd = fd

    def exited(self) -> bool:
        """Whether the bot process has ended."""
        return self.process is None or self.process.poll() is not None

    def fail(self, kind: FaultKind, detail: str, *, reply: bytes | None = None,
             around_kill: SlowStep = nullcontext) -> Fault:
        """Mark the session dead with a fault carrying the process's exit and stderr tail, and
        kill it (inside ``around_kill``)."""
        fault = Fault(
            kind=kind, seat=None, bot=self.name, detail=detail, reply=truncate(reply),
            dropped_replies=self.dropped_replies, exit=self.exit_description(), stderr_tail=self.stderr_tail(),
        )
        if self.state is not SessionState.CLOSED:
            self.state = SessionState.DEAD
        self.death = self.death or fault
        with around_kill():
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


def close_sessions(sessions: Sequence[BotSession]) -> None:
    """Close several sessions together, one thread each: stopping a sandbox is mostly waiting
    for the kernel (the group frozen and emptied, bubblewrap reaped, the group removed), and
    the waits of a pool's processes then overlap instead of adding up."""
    open_ones = [session for session in sessions if session.state is not SessionState.CLOSED]
    if len(open_ones) > 1:
        with ThreadPoolExecutor(max_workers=len(open_ones), thread_name_prefix="session-close") as closing:
            try:
                closes = [closing.submit(session.close) for session in open_ones]
            except RuntimeError:  # the interpreter is exiting (a pool closed by a finalizer): no threads
                closes = []
            for done in closes:
                done.result()
    for session in open_ones:  # those no thread closed (closing a closed session does nothing)
        session.close()


def _power_of_ten(n: int) -> bool:
    return n > 0 and 10 ** (len(str(n)) - 1) == n


def _ipc_path(endpoint: str) -> str | None:
    """The filesystem path of an ``ipc://`` endpoint (None for other endpoints)."""
    if endpoint.startswith("ipc://") and not endpoint.startswith("ipc://@"):
        return endpoint[len("ipc://"):]
    return None


def _connection(fd: int, path: str) -> socket.socket | None:
    """A duplicate of descriptor ``fd`` if it still is a connection accepted on ``path``."""
    try:
        dup = os.dup(fd)
    except OSError:
        return None
    try:
        conn = socket.socket(fileno=dup)
    except OSError:
        os.close(dup)
        return None
    try:
        if conn.family == socket.AF_UNIX and conn.getsockname() == path:
            return conn
    except OSError:
        pass
    conn.close()
    return None


def _peer_pid(conn: socket.socket) -> int:
    """The host pid of the process that connected (0 if unknown)."""
    try:
        return int(_PEERCRED.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size))[0])
    except OSError:
        return 0


def launch_session(
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
    pinned: bool = False,
) -> BotSession:
    """Start ``manifest``'s bot without waiting for its hello (so several can start at once, and
    the conductor can greet them while it plays); its handshake limit counts from now, and its
    ``welcome`` will grant at most ``max_games`` and carry ``rules``. A bot that serves one game at
    a time (``pinned``) runs on this worker's own cores (``arena.botproc.cores``). A failed start
    gives a dead session with its fault."""
    endpoint = f"ipc://{make_link_folder(socket_dir, str(index))}/link.sock"  # one folder per bot
    handshake = Handshake(time.monotonic() + handshake_s, max_games, rules or {})
    session = BotSession(name or manifest.name, manifest, ctx, endpoint, handshake, pinned=pinned)
    try:
        session.process = start_bot(manifest, run_dir=run_dir, endpoint=endpoint, token=session.token,
                                    limits=limits, sandbox=sandbox, pinned=pinned)
    except ArenaError as exc:  # the sandbox could not be set up: our side, not the bot's
        session.fail(FaultKind.HARNESS, f"could not start the bot: {exc}")
    return session


_EXIT_CHECK_S = 0.05  # how often ``greet`` looks for a bot that exited without a word


def greet(sessions: Sequence[BotSession]) -> None:
    """Shake hands with every starting session at once, each within its own deadline, and
    return when none is starting any more (see ``BotSession.shake``)."""
    waiting = [session for session in sessions if session.starting]
    poller = zmq.Poller()
    for session in waiting:
        poller.register(session.socket, zmq.POLLIN)
        poller.register(session.monitor, zmq.POLLIN)
    while waiting:
        now = time.monotonic()
        for session in [s for s in waiting if not s.shake(now)]:
            waiting.remove(session)
            poller.unregister(session.socket)  # a dead bot's pending events would wake every poll
            poller.unregister(session.monitor)
        if waiting:
            soonest = min(session.handshake.deadline for session in waiting)
            poller.poll(math.ceil(max(0.0, min(_EXIT_CHECK_S, soonest - now)) * 1000.0))


def _flooded(session: BotSession, around_kill: SlowStep = nullcontext) -> bool:
    """Whether the bot's sandbox opened more connections than allowed before its hello (it then
    dies with a ``protocol`` fault, killed inside ``around_kill``)."""
    if session.own_connections <= MAX_OWN_CONNECTIONS:
        return False
    session.fail(FaultKind.PROTOCOL, f"opened more than {MAX_OWN_CONNECTIONS} connections to its "
                                     "endpoint before its hello (the protocol allows one)",
                 around_kill=around_kill)
    return True
