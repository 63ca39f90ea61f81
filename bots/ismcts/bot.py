"""The ``ismcts`` reference bot: ``botkit.bots.IsmctsBot`` behind the SDK (one object per game).

Information Set MCTS with expert rollouts and the exact endgame. Budget: BOT_BUDGET
iterations per decision (default 600).
"""

from __future__ import annotations

from botkit.bots import IsmctsBot
from protocol.client import run

if __name__ == "__main__":
    run(IsmctsBot)
