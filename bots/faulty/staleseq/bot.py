"""Faulty bot: answers its first request with a ``seq`` it was never sent, then stays silent
(the reply is dropped and counted; the request times out)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from rawbot import VERSION, Link  # noqa: E402

link = Link()
link.hello(name="faulty-staleseq")
for request in link.requests():
    link.send({"v": VERSION, "type": "action", "seq": request["seq"] + 1000, "game_id": request["game_id"],
               "action": request["legal_actions"][0]})
    link.stay_silent()
