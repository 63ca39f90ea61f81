"""Faulty bot: answers the first decision of each game after time_limit_ms + bank_ms (timeout),
then plays at once (so under the lenient policy the match goes on)."""

import time

from protocol.client import Bot, run

MARGIN_S = 0.05


class SlowBot(Bot):
    name, version = "faulty-slow", "1.0"

    def __init__(self, game_id, seat):
        super().__init__(game_id, seat)
        self.slept = False

    def act(self, view, legal_actions):
        if not self.slept:
            self.slept = True
            time.sleep((self.time_limit_ms + self.bank_ms) / 1000.0 + MARGIN_S)
        return legal_actions[0]


if __name__ == "__main__":
    run(SlowBot)
