"""Faulty bot: says hello in protocol version 2.0 (rejected: protocol)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from rawbot import Link  # noqa: E402

link = Link()
link.hello(v="2.0", name="faulty-wrongversion")
link.stay_silent()  # exits on the reject
