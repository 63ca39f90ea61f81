"""Hostile bot: keeps the move and thinks between its answer and its next request.

It prefers the actions after which it moves again (``close``, ``exchange``, a ``meld``) and,
once it has answered, spins until the arena's next message. A bot asked again at once is not
frozen between its answer and its next request (that would cost a freeze and a thaw for
nothing), so it thinks there for free unless the arena stops for something slow in that round:
a kill of another bot, in a round or in its handshake, with every clock stopped. Then it would
think on time that is nobody's; the arena freezes it through the kill, as it freezes the bots
that owe an answer already sent.
"""

import time

from protocol.rawlink import Link

SPIN_LIMIT_S = 2.0  # the longest it thinks after an answer, waiting for the next message

link = Link()
link.hello(name="keepmove")
for request in link.requests():
    legal = request["legal_actions"]
    keeping = [a for a in legal if a in ("close", "exchange") or a.startswith("meld ")]
    plays = [a for a in legal if a.startswith("play ")]
    link.answer(request, (keeping or plays or legal)[0])
    end = time.monotonic() + SPIN_LIMIT_S
    while time.monotonic() < end and not link.sock.poll(0):
        pass  # thinking, on whatever time the arena leaves it thawed
