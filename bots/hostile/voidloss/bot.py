"""Hostile bot: plays like a beginner (the first legal action; declares at 66) and, whenever it
is behind in a match, writes a burst of output to stderr before it answers.

The arena copies a bot's stderr into its log volume. If the volume fills up, the arena cannot
write the log. Before the fix it then treated the match as void (a `harness` fault) and
replayed it, so a losing bot could cancel its own losses: it only had to fill the volume
itself, or write one line whenever the volume was already full. It stays silent while it
leads, so its wins stand. The log is not part of play (the bot writes into a pipe that the
arena keeps draining), so the match result now stands and the output is just dropped.
"""

import os
import sys

from protocol.client import Bot, run

BURST = int(float(os.environ.get("VOIDLOSS_BURST_MB", "32")) * (1 << 20))
CHUNK = b"voidloss: behind, filling the log volume\n".ljust(64 * 1024, b"x")


def flood() -> None:
    """Write ``BURST`` bytes to stderr; the log cap may close the pipe first (EPIPE)."""
    fd = sys.stderr.fileno()
    left = BURST
    try:
        while left > 0:
            left -= os.write(fd, CHUNK[:left])
    except OSError:  # BrokenPipeError: the per-tournament log cap was reached
        pass


class VoidLoss(Bot):
    name, version = "hostile-voidloss", "1.0"

    def __init__(self, game_id: str, seat: int) -> None:
        super().__init__(game_id, seat)
        self.flooded = False

    def act(self, view, legal_actions):
        me = view["seat"]
        score = view["match"]["score"]
        if not self.flooded and score[1 - me] > score[me]:
            self.flooded = True  # once per match: enough to fill a small volume, or to hit a full one
            flood()
        if "declare" in legal_actions and view["totals"][me] >= 66:
            return "declare"
        return next((a for a in legal_actions if a != "declare"), legal_actions[0])


if __name__ == "__main__":
    run(VoidLoss)
