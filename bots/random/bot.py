"""Random bot: uniform over the legal actions, but it declares exactly when its total is 66
or more (declaring at random would end most hands with a false declaration).

Each game gets its own ``random.Random`` seeded with ``"<seed>:<game_id>:<seat>"``, so a game's
moves do not depend on how games are interleaved. The base seed comes from ``--seed`` or
``RANDOM_BOT_SEED`` (default "0"). It imports only the SDK, never the engine.
"""

from __future__ import annotations

import argparse
import os
import random
from typing import Any

from protocol.client import Bot, run


_parser = argparse.ArgumentParser(add_help=False)
_parser.add_argument("--seed", default=os.environ.get("RANDOM_BOT_SEED", "0"))
SEED: str = _parser.parse_known_args()[0].seed


class RandomBot(Bot):
    """Uniform over the legal actions; ``declare`` only, and always, at 66 or more."""

    name = "random"
    version = "1.0"
    max_games = 16

    def __init__(self, game_id: str, seat: int) -> None:
        super().__init__(game_id, seat)
        self.rng = random.Random(f"{SEED}:{game_id}:{seat}")

    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str:
        if "declare" in legal_actions:
            if view["totals"][view["seat"]] >= 66:
                return "declare"
            legal_actions = [a for a in legal_actions if a != "declare"] or legal_actions
        return self.rng.choice(legal_actions)


if __name__ == "__main__":
    run(RandomBot)
