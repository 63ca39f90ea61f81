"""Hostile bot: holds its hello back as long as it dares, to stall the arena's other matches.

It plays ``bench/bots/echo``'s moves. A new process has the whole handshake limit for its
hello, and an arena that waited for it there while other matches had requests out would
charge their bots the wait: a competitor starting late, on purpose, could run its opponents'
clocks out in the pairs beside its own. It connects at once, then says hello after
``HOSTILE_HELLO_DELAY_S`` seconds (5 by default, within the limit), or as soon as it gets
SIGUSR1 (so a test can release it once the arena showed it did not wait). It writes
``latehello: waiting`` to stderr before, and ``latehello: hello on signal`` or ``latehello:
hello after the delay`` when it says it.
"""

from __future__ import annotations

import os
import signal
import sys

from protocol.rawlink import Link

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
link = Link()
print("latehello: waiting", file=sys.stderr, flush=True)
signalled = signal.sigtimedwait({signal.SIGUSR1}, float(os.environ.get("HOSTILE_HELLO_DELAY_S", "5")))
print(f"latehello: hello {'on signal' if signalled else 'after the delay'}", file=sys.stderr, flush=True)
link.hello(name="latehello", max_games=int(os.environ.get("HOSTILE_MAX_GAMES", "1")))
for request in link.requests():
    link.answer(request)
