"""Hostile bot, one half of a team: answers each first request with a message over the size cap
(the arena's socket resets the link) and then stays alive, so the arena waits a moment to tell
a crash from a disconnect. While the arena's clocks are stopped for that wait, any bot already
thinking in another match of the same worker (the team's other bot, ``freeloader``) would think
for free. The arena freezes those bots for the wait: nobody thinks on time that is nobody's."""

from protocol.rawlink import VERSION, Link

link = Link()
link.hello(name="hostile-clockstop", max_games=4)
for request in link.requests():
    link.send({"v": VERSION, "type": "action", "seq": request["seq"], "game_id": request["game_id"],
               "action": request["legal_actions"][0], "padding": "x" * (70 * 1024)})
    link.stay_silent()
