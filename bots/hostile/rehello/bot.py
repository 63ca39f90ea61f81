"""Hostile bot: answers its first request with a second hello, a protocol fault for which the
arena kills it at once, in the middle of a poll round.

Killing a sandbox takes the arena a few milliseconds (the group frozen, emptied and thawed,
bubblewrap reaped). A competitor who can make the arena do that while other matches' bots are
thinking would have those bots charged the stall, and their banks drained. The arena stops the
clocks of every request out while it kills a bot: only this bot is charged (``protocol``).
"""

from protocol.rawlink import Link

link = Link()
link.hello(name="rehello")
for request in link.requests():
    link.hello(name="rehello")  # the arena kills it here
    break
link.stay_silent()
