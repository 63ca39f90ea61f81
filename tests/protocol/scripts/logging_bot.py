"""Test bot: logs every call with its object's id to stderr as ``LOG {json}`` lines (objects are numbered 1, 2, ...) and plays
the last legal action. ``CRASH_IN=act|init|hand_over`` makes that call raise."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from protocol.client import Bot, run

CRASH_IN = os.environ.get("CRASH_IN", "")


def log(**fields: Any) -> None:
    print("LOG " + json.dumps(fields), file=sys.stderr, flush=True)


class LoggingBot(Bot):
    name = "logging"
    version = "1"
    max_games = 4
    made = 0  # objects made so far; each gets the next number

    def __init__(self, game_id: str, seat: int) -> None:
        super().__init__(game_id, seat)
        if CRASH_IN == "init":
            raise RuntimeError("boom in __init__")
        LoggingBot.made += 1
        self.number = LoggingBot.made
        self.calls = 0
        log(event="init", obj=self.number, game=game_id, seat=seat)

    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str:
        self.calls += 1
        if CRASH_IN == "act":
            raise ValueError("boom in act")
        log(event="act", obj=self.number, game=self.game_id, seat=view["seat"], n=self.calls,
            time_limit_ms=self.time_limit_ms, bank_ms=self.bank_ms)
        return legal_actions[-1]

    def on_hand_over(self, result: dict[str, Any], view: dict[str, Any]) -> None:
        if CRASH_IN == "hand_over":
            raise KeyError("boom in on_hand_over")
        log(event="hand_over", obj=self.number, game=self.game_id, reason=result["reason"])

    def on_match_over(self, summary: dict[str, Any]) -> None:
        log(event="match_over", obj=self.number, game=self.game_id, summary=summary)


if __name__ == "__main__":
    run(LoggingBot)
