"""Faulty bot: answers its first request with bytes that are not JSON (malformed)."""

from protocol.rawlink import Link

link = Link()
link.hello(name="faulty-notjson")
for request in link.requests():
    link.send_raw(b"play AH, obviously {not json")
    link.stay_silent()
