"""Faulty bot: answers its first request with a message over the 64 KiB size cap (the arena's
socket resets the link: disconnect), then stays alive and silent."""

from protocol.rawlink import VERSION, Link

link = Link()
link.hello(name="faulty-oversize")
for request in link.requests():
    link.send({"v": VERSION, "type": "action", "seq": request["seq"], "game_id": request["game_id"],
               "action": request["legal_actions"][0], "padding": "x" * (70 * 1024)})
    link.stay_silent()
