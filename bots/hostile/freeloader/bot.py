"""Hostile bot, the other half of ``clockstop``'s team: spends SPIN_S of wall time on the CPU
before each move (uniform over the legal ones, seeded per game like ``bots/random``), so it is
thinking whenever its teammate makes the arena stop its clocks. Thinking on stopped time would
show as more CPU than wall time in a decision's record; the arena freezes it instead."""

import random
import time

from protocol.client import Bot, run

SPIN_S = 0.12


class Freeloader(Bot):
    name, version, max_games = "hostile-freeloader", "1.0", 4

    def __init__(self, game_id: str, seat: int) -> None:
        super().__init__(game_id, seat)
        self.rng = random.Random(f"0:{game_id}:{seat}")

    def act(self, view, legal_actions):
        end = time.monotonic() + SPIN_S
        while time.monotonic() < end:
            pass
        if "declare" in legal_actions and view["totals"][view["seat"]] >= 66:
            return "declare"
        return self.rng.choice([a for a in legal_actions if a != "declare"] or legal_actions)


if __name__ == "__main__":
    run(Freeloader)
