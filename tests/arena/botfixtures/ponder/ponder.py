"""Thinks 100 ms before each move, then plays the first legal action."""
import time

from protocol.rawlink import Link

PONDER_S = 0.1

link = Link()
link.hello(name="ponder")
for request in link.requests():
    time.sleep(PONDER_S)
    link.answer(request)
