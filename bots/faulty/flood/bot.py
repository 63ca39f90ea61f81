"""Faulty bot: on its second decision writes to stderr without bound; its log cap ends it: the
arena closes its stderr, the next write fails with EPIPE and the bot dies of it (crash)."""

import os

from protocol.client import Bot, run

BLOCK = b"flood! " * 9362 + b"\n"  # about 64 KiB


class Flood(Bot):
    name, version = "faulty-flood", "1.0"
    decisions = 0

    def act(self, view, legal_actions):
        Flood.decisions += 1
        if Flood.decisions >= 2:
            while True:  # until the write fails (EPIPE once the arena closed the pipe)
                os.write(2, BLOCK)
        return legal_actions[0]


if __name__ == "__main__":
    run(Flood)
