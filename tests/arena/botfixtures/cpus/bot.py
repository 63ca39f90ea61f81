"""Prints ``cpus=[...]`` (its CPU affinity) on stderr, then plays the first legal action."""
import os
import sys
from typing import Any

from protocol.client import Bot, run


class FirstBot(Bot):
    name, version, max_games = "cpus", "1", 4

    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str:
        return legal_actions[0]


if __name__ == "__main__":
    print(f"cpus={sorted(os.sched_getaffinity(0))}", file=sys.stderr, flush=True)
    run(FirstBot)
