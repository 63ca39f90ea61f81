"""Faulty bot: handshakes, then reads every request and never answers (timeout)."""

from protocol.rawlink import Link

link = Link()
link.hello(name="faulty-silent")
for request in link.requests():
    link.say(f"silent: ignoring request seq {request['seq']}")
