"""Faulty bot: answers its first request with a ``seq`` it was never sent, then stays silent
(the reply is dropped and counted; the request times out)."""

from protocol.rawlink import VERSION, Link

link = Link()
link.hello(name="faulty-staleseq")
for request in link.requests():
    link.send({"v": VERSION, "type": "action", "seq": request["seq"] + 1000, "game_id": request["game_id"],
               "action": request["legal_actions"][0]})
    link.stay_silent()
