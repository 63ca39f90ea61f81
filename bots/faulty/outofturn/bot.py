"""Faulty bot: answers its first request, then sends a second hello instead of its second
action (out of turn: protocol)."""

from protocol.rawlink import Link

link = Link()
link.hello(name="faulty-outofturn")
for n, request in enumerate(link.requests()):
    if n == 0:
        link.answer(request)
    else:
        link.hello(name="faulty-outofturn")
        link.stay_silent()
