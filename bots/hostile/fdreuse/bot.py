"""Hostile bot: floods other bots' endpoints with connections that close at once, while it
plays ``bench/bots/echo``'s moves.

libzmq gives each accepted connection the lowest free descriptor, so a connection that comes
and goes over and over leaves the arena's socket monitor a queue of ``ACCEPTED(N)``,
``DISCONNECTED(N)`` for the same ``N``. The arena once read that queue after the opponent's
own link had taken ``N``, counted the link once per stale event, and charged the opponent
``protocol`` ("more than 16 connections to its endpoint before its hello").

A thread looks for ``*.sock`` files one and two levels below the folder of its own
endpoint's folder (where an arena keeps its bots' sockets), plus the glob in
``HOSTILE_TARGETS``, and connects and closes a bare Unix socket on each, as fast as it can,
until the path is gone (the arena removes it after its bot's hello). A connection can only
have been made before the target's hello. Every 0.2 s it writes
``fdreuse: targets T connected C refused R`` to stderr.
"""

from __future__ import annotations

import glob
import os
import socket
import sys
import threading
import time

from protocol.rawlink import Link

BURST = 1000  # connections per target before it looks for new targets


def targets(own: str) -> set[str]:
    """Socket paths of other bots it can see."""
    root = os.path.dirname(os.path.dirname(own))
    found = glob.glob(os.path.join(root, "*.sock")) + glob.glob(os.path.join(root, "*", "*.sock"))
    found += glob.glob(os.environ["HOSTILE_TARGETS"]) if os.environ.get("HOSTILE_TARGETS") else []
    return set(found) - {own}


def churn(path: str) -> tuple[int, bool]:
    """Up to ``BURST`` connections to ``path``, each closed at once; how many, and whether it
    stopped because the endpoint refused."""
    for made in range(BURST):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(path)
        except OSError:
            return made, True
    return BURST, False


def attack(own: str) -> None:
    connected = refused = 0
    done: set[str] = set()  # targets that refused: their bot said hello
    seen: set[str] = set()
    report = time.monotonic() + 0.2
    while True:
        live = targets(own) - done
        seen |= live
        for path in sorted(live):
            made, stopped = churn(path)
            connected += made
            if stopped:
                refused += 1
                done.add(path)
        if time.monotonic() >= report:
            print(f"fdreuse: targets {len(seen)} connected {connected} refused {refused}", file=sys.stderr, flush=True)
            report += 0.2
        if not live:
            time.sleep(0.001)  # nothing to attack: look again soon


link = Link()
threading.Thread(target=attack, args=(link.endpoint[len("ipc://"):],), daemon=True).start()
link.hello(name="fdreuse")
for request in link.requests():
    link.answer(request)
