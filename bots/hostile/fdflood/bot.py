"""Hostile bot: tries to exhaust the arena's descriptors through its own endpoint.

It plays ``bench/bots/echo``'s moves. Before its hello it forks ``CHILDREN`` processes (fewer
if the sandbox refuses more); on a signal through a pipe each opens up to ``PER_CHILD``
connections to the bot's endpoint and holds them: every accepted connection is a descriptor
in the arena. 90 x 240 once pushed the arena past select()'s descriptor ceiling; pairs
between other bots went void and ``arena match`` hung. ``HOSTILE_PHASE``: ``after``
(default) floods once it has answered its first request, ``before`` floods and waits for
every child to be done before it says hello. Each child writes
``fdflood: child connected C refused R`` to stderr.
"""

from __future__ import annotations

import os
import socket
import sys
import time

from protocol.rawlink import Link

CHILDREN = 30
PER_CHILD = 240


def hold(path: str, go: int, done: int) -> None:
    """In a child: on ``go``, open and keep up to PER_CHILD connections, say so on ``done``."""
    os.read(go, 1)
    held, refused = [], 0
    for _ in range(PER_CHILD):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(path)
            held.append(conn)
        except OSError:
            conn.close()
            refused += 1
    print(f"fdflood: child connected {len(held)} refused {refused}", file=sys.stderr, flush=True)
    os.write(done, b".")
    while True:
        time.sleep(3600)


def fork_children(path: str) -> tuple[int, int, int]:
    """(the go pipe's write end, the done pipe's read end, how many children)."""
    go_r, go_w = os.pipe()
    done_r, done_w = os.pipe()
    children = 0
    for _ in range(CHILDREN):
        try:
            if os.fork() == 0:
                try:
                    hold(path, go_r, done_w)
                finally:
                    os._exit(0)
        except OSError:
            break
        children += 1
    return go_w, done_r, children


path = os.environ["ARENA_ENDPOINT"][len("ipc://"):]
go, done, children = fork_children(path)  # before any ZeroMQ context exists here
link = Link()
if os.environ.get("HOSTILE_PHASE") == "before":
    os.write(go, b"." * children)
    for _ in range(children):
        os.read(done, 1)
link.hello(name="fdflood")
for n, request in enumerate(link.requests()):
    link.answer(request)
    if n == 0:
        os.write(go, b"." * children)
