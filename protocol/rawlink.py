"""A raw ZeroMQ link to the arena: the wire format by hand, no SDK in the way.

The faulty bots under ``bots/faulty/`` that misbehave *on the wire* (bytes that are not JSON,
a wrong ``seq``, a second ``hello`` ...) cannot do it through ``protocol.client``, which always
speaks correctly; the hostile bots under ``bots/hostile/`` use it to play while they attack.
A bot sees only its own folder and the SDK packages, so this lives in the SDK::

    from protocol.rawlink import Link

Only pyzmq and the standard library are used, as a bot in another language would.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import zmq

VERSION = "1.0"


class Link:
    """One DEALER socket connected to ``$ARENA_ENDPOINT`` with ``$ARENA_TOKEN`` as identity."""

    def __init__(self) -> None:
        self.endpoint = os.environ["ARENA_ENDPOINT"]
        self.token = os.environ["ARENA_TOKEN"]
        self.parent = os.getppid()
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.ROUTING_ID, self.token.encode())
        self.sock.connect(self.endpoint)

    def say(self, text: str) -> None:
        """A line on stderr (it ends up in the fault's stderr tail)."""
        print(f"[{os.path.basename(sys.argv[0])} pid {os.getpid()}] {text}", file=sys.stderr, flush=True)

    def send_raw(self, data: bytes) -> None:
        self.sock.send(data)

    def send(self, msg: dict[str, Any]) -> None:
        self.send_raw(json.dumps(msg).encode())

    def hello(self, *, v: str = VERSION, name: str = "faulty", max_games: int = 1) -> None:
        self.send({"v": v, "type": "hello", "token": self.token, "name": name, "version": "1",
                   "capabilities": {"max_games": max_games}})

    def answer(self, request: dict[str, Any], action: str | None = None) -> None:
        """Answer ``request`` correctly (its first legal action unless ``action`` is given)."""
        self.send({"v": VERSION, "type": "action", "seq": request["seq"], "game_id": request["game_id"],
                   "action": action if action is not None else request["legal_actions"][0]})

    def messages(self) -> Iterator[dict[str, Any]]:
        """Every arena message; exits the process on ``shutdown`` (0), ``reject`` (3) or when
        the arena seems gone (parent changed: 4)."""
        while True:
            if not self.sock.poll(500):
                if os.getppid() != self.parent:
                    os._exit(4)
                continue
            msg = json.loads(self.sock.recv())
            kind = msg.get("type")
            if kind == "shutdown":
                os._exit(0)
            if kind == "reject":
                self.say(f"rejected: {msg.get('reason')}: {msg.get('detail')}")
                os._exit(3)
            yield msg

    def requests(self) -> Iterator[dict[str, Any]]:
        """Only the requests (welcome and notifications are read and ignored)."""
        for msg in self.messages():
            if msg.get("type") == "request":
                yield msg

    def stay_silent(self) -> None:
        """Read and ignore everything, answer nothing, until the arena stops us."""
        for _ in self.messages():
            pass


def pause(seconds: float) -> None:
    """Sleep the whole of ``seconds`` (a deadline, not a hope)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(left)
