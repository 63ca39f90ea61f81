"""Faulty bot: says hello in protocol version 2.0 (rejected: protocol)."""

from protocol.rawlink import Link

link = Link()
link.hello(v="2.0", name="faulty-wrongversion")
link.stay_silent()  # exits on the reject
