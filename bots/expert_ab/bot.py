"""The ``expert_ab`` reference bot: ``botkit.bots.ExpertABBot`` behind the SDK (one object per game).

expert plus exact game-point alpha-beta once the stock is closed or exhausted (a small PIMC
over the unseen cards after a close). Budget: BOT_BUDGET worlds (default 30).
"""

from __future__ import annotations

from botkit.bots import ExpertABBot
from protocol.client import run

if __name__ == "__main__":
    run(ExpertABBot)
