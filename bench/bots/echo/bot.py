"""Echo bot: the first legal action, at once (its own time is negligible)."""

from __future__ import annotations

from typing import Any

from protocol.client import Bot, run


class EchoBot(Bot):
    """Plays ``legal_actions[0]``."""

    name = "echo"
    version = "1.0"
    max_games = 64

    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str:
        return legal_actions[0]


if __name__ == "__main__":
    run(EchoBot)
