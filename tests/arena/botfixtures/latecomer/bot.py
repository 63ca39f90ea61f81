"""Connects to its endpoint and says hello only once it gets SIGUSR1, then plays the first
legal action. It writes ``latecomer: waiting`` to stderr once the signal can no longer kill it."""

import signal
import sys

from protocol.rawlink import Link

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("latecomer: waiting", file=sys.stderr, flush=True)
signal.sigwait({signal.SIGUSR1})
link = Link()
link.hello(name="latecomer")
for request in link.requests():
    link.answer(request)
