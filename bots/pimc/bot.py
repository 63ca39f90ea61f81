"""The ``pimc`` reference bot: ``botkit.bots.PimcBot`` behind the SDK (one object per game).

Perfect-Information Monte Carlo: sampled worlds, expert rollouts with the exact endgame,
best mean game points. Budget: BOT_BUDGET worlds per decision (default 16).
"""

from __future__ import annotations

from botkit.bots import PimcBot
from protocol.client import run

if __name__ == "__main__":
    run(PimcBot)
