"""Faulty bot: sleeps 30 s before its hello, past the handshake limit (timeout)."""

from protocol.rawlink import Link, pause

DELAY_S = 30.0

link = Link()
link.say(f"slowhello: sleeping {DELAY_S:g} s before the hello")
pause(DELAY_S)
link.hello(name="faulty-slowhello")
for request in link.requests():
    link.answer(request)
