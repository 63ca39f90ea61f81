"""Connects to its endpoint and says hello only once it gets SIGUSR1, then plays the first
legal action. It writes ``latecomer: waiting`` to stderr once the signal can no longer kill it.
With ``LATECOMER_EXTRA=N`` it first opens N bare connections of its own and keeps them."""

import os
import signal
import socket
import sys

from protocol.rawlink import Link

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("latecomer: waiting", file=sys.stderr, flush=True)
signal.sigwait({signal.SIGUSR1})
extra = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(int(os.environ.get("LATECOMER_EXTRA", "0")))]
for conn in extra:
    conn.connect(os.environ["ARENA_ENDPOINT"][len("ipc://"):])
link = Link()
link.hello(name="latecomer")
for request in link.requests():
    link.answer(request)
