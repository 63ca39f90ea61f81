"""Faulty bot: answers its first request, then sends a second hello instead of its second
action (out of turn: protocol)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from rawbot import Link  # noqa: E402

link = Link()
link.hello(name="faulty-outofturn")
for n, request in enumerate(link.requests()):
    if n == 0:
        link.answer(request)
    else:
        link.hello(name="faulty-outofturn")
        link.stay_silent()
