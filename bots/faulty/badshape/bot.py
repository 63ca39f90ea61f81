"""Faulty bot: answers its first request with JSON of the wrong shape: ``seq`` as a string
(malformed)."""

from protocol.rawlink import VERSION, Link

link = Link()
link.hello(name="faulty-badshape")
for request in link.requests():
    link.send({"v": VERSION, "type": "action", "seq": str(request["seq"]), "game_id": request["game_id"],
               "action": request["legal_actions"][0]})
    link.stay_silent()
