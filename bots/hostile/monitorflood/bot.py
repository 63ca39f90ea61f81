"""Hostile bot: opens and closes ``FLOOD`` connections to its own endpoint.

It plays ``bench/bots/echo``'s moves. Each connection once made the arena's socket monitor
queue an event; 20,000 of them filled the monitor's pipe, libzmq's I/O thread blocked
sending the next one, and the whole worker deadlocked. ``HOSTILE_PHASE``:

- ``after`` (default): before its hello it opens ``HELD`` connections (fewer than the arena
  allows) and keeps them; once the match runs it closes them (their disconnects must not
  count as its own) and then churns ``FLOOD`` connections, all refused;
- ``before``: it churns ``FLOOD`` connections before it says hello at all.

It writes ``monitorflood: connected C refused R`` to stderr when done.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

from protocol.rawlink import Link

FLOOD = 20_000
HELD = 12


def churn(path: str, count: int) -> None:
    connected = refused = 0
    for _ in range(count):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(path)
            connected += 1
        except OSError:
            refused += 1
    print(f"monitorflood: connected {connected} refused {refused}", file=sys.stderr, flush=True)


def close_then_churn(held: list[socket.socket], path: str) -> None:
    for conn in held:
        conn.close()
    churn(path, FLOOD)


link = Link()
path = link.endpoint[len("ipc://"):]
held = []
if os.environ.get("HOSTILE_PHASE") == "before":
    churn(path, FLOOD)
else:
    for _ in range(HELD):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        held.append(conn)
link.hello(name="monitorflood")
for n, request in enumerate(link.requests()):
    link.answer(request)
    if n == 0 and held:
        threading.Thread(target=close_then_churn, args=(held, path), daemon=True).start()
