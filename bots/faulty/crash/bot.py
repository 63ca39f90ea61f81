"""Faulty bot: plays three decisions correctly, then exits mid-match with status 3 (crash)."""

import os
import sys

from protocol.client import Bot, run

CRASH_AFTER = 3


class CrashBot(Bot):
    name, version = "faulty-crash", "1.0"
    decisions = 0  # across games: the process dies once

    def act(self, view, legal_actions):
        CrashBot.decisions += 1
        if CrashBot.decisions > CRASH_AFTER:
            print(f"crash: exiting with status 3 after {CRASH_AFTER} decisions", file=sys.stderr, flush=True)
            os._exit(3)
        return legal_actions[0]


if __name__ == "__main__":
    run(CrashBot)
