"""Faulty bot: answers its first request with bytes that are not JSON (malformed)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from rawbot import Link  # noqa: E402

link = Link()
link.hello(name="faulty-notjson")
for request in link.requests():
    link.send_raw(b"play AH, obviously {not json")
    link.stay_silent()
