"""Hostile bot: attacks the opponent's link while it plays ``bench/bots/echo``'s moves.

A thread keeps looking for other endpoints: ``*.sock`` files in the folder of its own
endpoint's folder and one level below (where an arena keeps its bots' sockets), plus the glob
in ``HOSTILE_TARGETS`` (tests hand it the opponent's path that way, to show that the defence
does not rest on the path being secret). On each one, over and over, it connects and
disconnects a bare Unix socket, then connects a DEALER with a guessed routing id, sends junk,
a ``hello`` whose token is that guess, a 50-part message, and disconnects. The arena once
charged the opponent ``disconnect`` for the first such disconnect. Every 0.2 s it writes
``linkpeek: targets T connected C refused R`` to stderr.
"""

from __future__ import annotations

import glob
import json
import os
import secrets
import socket
import sys
import threading
import time

import zmq

from protocol.rawlink import Link


def targets(own: str) -> list[str]:
    """Socket paths of other bots it can see."""
    root = os.path.dirname(os.path.dirname(own))
    found = glob.glob(os.path.join(root, "*.sock")) + glob.glob(os.path.join(root, "*", "*.sock"))
    found += glob.glob(os.environ.get("HOSTILE_TARGETS", "")) if os.environ.get("HOSTILE_TARGETS") else []
    return sorted({path for path in found if path != own})


def peek(ctx: zmq.Context, path: str) -> bool:
    """One round on one endpoint; False if it could not connect."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as bare:
            bare.connect(path)
    except OSError:
        return False
    guess = secrets.token_hex(16)
    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.setsockopt(zmq.ROUTING_ID, guess.encode())
    dealer.setsockopt(zmq.SNDTIMEO, 0)
    dealer.connect("ipc://" + path)
    try:
        dealer.send(b"junk that is not json")
        dealer.send(json.dumps({"v": "1.0", "type": "hello", "token": guess, "name": "linkpeek",
                                "version": "1", "capabilities": {"max_games": 1}}).encode())
        dealer.send_multipart([b"part"] * 50)
    except zmq.Again:
        pass
    time.sleep(0.002)  # let it connect and deliver before the disconnect
    dealer.close()
    return True


def attack(own: str) -> None:
    ctx = zmq.Context()
    connected = refused = 0
    seen: set[str] = set()
    report = time.monotonic() + 0.2
    while True:
        seen.update(targets(own))
        for path in sorted(seen):  # once seen, tried forever (the arena removes a path after the hello)
            if peek(ctx, path):
                connected += 1
            else:
                refused += 1
        if time.monotonic() >= report or refused == 1:
            print(f"linkpeek: targets {len(seen)} connected {connected} refused {refused}", file=sys.stderr, flush=True)
            report += 0.2
        time.sleep(0.001)


link = Link()
threading.Thread(target=attack, args=(link.endpoint[len("ipc://"):],), daemon=True).start()
link.hello(name="linkpeek")
for request in link.requests():
    link.answer(request)
