"""Hostile bot: floods its own endpoint with stray frames while it plays ``bench/bots/echo``'s moves.

Before its hello it connects ``STRAYS`` extra DEALERs with other routing ids to its own
endpoint (fewer than the arena allows), then a thread sends through them, as fast as they
take it, single frames and 20-part messages of 60 KiB frames, all match long and so during
the opponent's turns. The arena once read that flood while the opponent thought, and the
opponent was charged timeouts. After the hello it also tries to connect more DEALERs (the
endpoint is gone by then). Every 0.2 s (first after 50 ms) it writes ``strayframes: sent S blocked B`` to stderr.
"""

from __future__ import annotations

import sys
import threading
import time

import zmq

from protocol.rawlink import Link

STRAYS = 8
BIG = b"x" * (60 * 1024)


def flood(strays: list[zmq.Socket], ctx: zmq.Context, endpoint: str) -> None:
    sent = blocked = 0
    report = time.monotonic() + 0.05  # soon: a quick match may end within a second
    late: list[zmq.Socket] = []
    while True:
        progress = False
        for n, stray in enumerate(strays):
            try:
                if n % 2:
                    stray.send_multipart([BIG] * 20, zmq.NOBLOCK)
                else:
                    stray.send(b"stray frame", zmq.NOBLOCK)
                sent += 1
                progress = True
            except zmq.Again:
                blocked += 1
        if len(late) < 32:  # after the hello: more connections (refused now)
            sock = ctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(endpoint)
            late.append(sock)
        if time.monotonic() >= report:
            print(f"strayframes: sent {sent} blocked {blocked}", file=sys.stderr, flush=True)
            report += 0.2
        if not progress:
            time.sleep(0.001)  # the arena is not reading: every queue is full


link = Link()
strays = []
for n in range(STRAYS):
    stray = link.ctx.socket(zmq.DEALER)
    stray.setsockopt(zmq.LINGER, 0)
    stray.setsockopt(zmq.ROUTING_ID, f"stray-{n}".encode())
    stray.connect(link.endpoint)
    strays.append(stray)
stray_ctx = zmq.Context()
time.sleep(0.2)  # the strays connect before the hello
threading.Thread(target=flood, args=(strays, stray_ctx, link.endpoint), daemon=True).start()
link.hello(name="strayframes")
for request in link.requests():
    link.answer(request)
