"""The ``greedy`` reference bot: ``botkit.bots.GreedyBot`` behind the SDK (one object per game).

One-ply rules: exchanges the trump nine, announces marriages (40 first), wins tricks
cheaply, discards low, never closes; declares at 66.
"""

from __future__ import annotations

from botkit.bots import GreedyBot
from protocol.client import run

if __name__ == "__main__":
    run(GreedyBot)
