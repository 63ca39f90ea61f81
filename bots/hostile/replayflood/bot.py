"""Hostile bot: a reply flood with valid-looking stale ``seq`` during the opponent's turn.

It plays ``bench/bots/echo``'s moves. After each answer, until the next message from the
arena, it sends copies of its past replies (right ``game_id``, stale ``seq``) on its own
authenticated link, as fast as the link takes them. The arena drops each one (a stale
``seq``); it reads the link only while the bot owes an answer, so the opponent's turns cost
nothing. Every second it writes ``replayflood: sent S`` to stderr.
"""

from __future__ import annotations

import json
import sys
import time

import zmq

from protocol.rawlink import VERSION, Link

link = Link()
link.hello(name="replayflood")
past: list[bytes] = []
sent = 0
report = time.monotonic() + 1.0
for request in link.requests():
    link.answer(request)
    past.append(json.dumps({"v": VERSION, "type": "action", "seq": request["seq"], "game_id": request["game_id"],
                            "action": request["legal_actions"][0]}).encode())
    n = 0
    while not link.sock.poll(0):
        try:
            link.sock.send(past[n % len(past)], zmq.NOBLOCK)
            sent += 1
            n += 1
        except zmq.Again:
            time.sleep(0.001)  # the link's queue is full: the arena is not reading it now
        if time.monotonic() >= report:
            print(f"replayflood: sent {sent}", file=sys.stderr, flush=True)
            report += 1.0
