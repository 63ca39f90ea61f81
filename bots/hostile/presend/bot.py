"""Hostile bot: answers the next request before the arena has sent it.

It plays ``bench/bots/echo``'s moves. ``seq`` numbers are predictable (one more per request
on a link), so with each answer it also sends a reply to ``seq + 1`` of the same game (the
first legal action of the request it just answered), hoping the arena takes it for the next
request's answer with a clock that never started. The arena queues a round's requests and
sends them when the round is handled, so the guess often arrives while its request is still
queued: it must be dropped as never issued. It writes ``presend: sent S`` to stderr after its
first guess, then every second.
"""

from __future__ import annotations

import json
import sys
import time

from protocol.rawlink import VERSION, Link

link = Link()
link.hello(name="presend")
sent = 0
report = time.monotonic() + 1.0
for request in link.requests():
    link.answer(request)
    link.sock.send(json.dumps({"v": VERSION, "type": "action", "seq": request["seq"] + 1,
                               "game_id": request["game_id"], "action": request["legal_actions"][0]}).encode())
    sent += 1
    if sent == 1 or time.monotonic() >= report:
        print(f"presend: sent {sent}", file=sys.stderr, flush=True)
        report = time.monotonic() + 1.0
