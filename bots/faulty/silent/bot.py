"""Faulty bot: handshakes, then reads every request and never answers (timeout)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from rawbot import Link  # noqa: E402

link = Link()
link.hello(name="faulty-silent")
for request in link.requests():
    link.say(f"silent: ignoring request seq {request['seq']}")
