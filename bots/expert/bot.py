"""The ``expert`` reference bot: ``botkit.bots.ExpertBot`` behind the SDK (one object per game).

Card counting and hand-written strategy: safe closes, marriage timing, trump management,
sure-winner cashing; declares at 66.
"""

from __future__ import annotations

from botkit.bots import ExpertBot
from protocol.client import run

if __name__ == "__main__":
    run(ExpertBot)
