"""Faulty bot: before it connects, starts a grandchild (double fork + setsid) that ignores
SIGTERM/SIGHUP and sleeps, meant to outlive the bot; then plays correctly. No fault in play:
the grandchild must die with the bot's sandbox."""

import os
import signal
import time

from protocol.client import Bot, run


def spawn_orphan() -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                signal.signal(sig, signal.SIG_IGN)
            while True:
                time.sleep(60)
        os._exit(0)
    os.wait()


class Spawner(Bot):
    name, version = "faulty-spawner", "1.0"

    def act(self, view, legal_actions):
        if "declare" in legal_actions and view["totals"][view["seat"]] >= 66:
            return "declare"
        return next(a for a in legal_actions if a != "declare")


if __name__ == "__main__":
    spawn_orphan()
    run(Spawner)
