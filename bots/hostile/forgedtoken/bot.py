"""Hostile bot: its hello carries a token that is not the one the arena gave it, as a bot trying
to pass itself off as another process (say, a stronger entrant's) would.

The arena rejects it and kills it at once, inside the handshake step of its poll loop, while the
bots of the matches already in play think. Killing a sandbox takes the arena a few milliseconds;
the clocks of every request out stop meanwhile and the bots thinking are frozen through it, so
only this bot is charged (``protocol``), and nobody thinks on the time its kill takes.
"""

from protocol.rawlink import VERSION, Link

link = Link()
link.send({"v": VERSION, "type": "hello", "token": link.token[::-1] + "x", "name": "forgedtoken", "version": "1",
           "capabilities": {"max_games": 1}})
link.stay_silent()  # a reject ends the process; the arena kills it first
