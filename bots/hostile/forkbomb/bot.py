"""Hostile bot: forks children (each sleeps forever) until fork fails, then frees a few
process slots for its own threads and plays legal moves. It reports on stderr how many
children it got: the arena's pids limit should stop it near 64. Without any limit it stops
itself at MAX_CHILDREN, so that running it by mistake does not take a machine down."""

import os
import signal
import sys

from protocol.client import Bot, run

MAX_CHILDREN = 2000
SPARE = 8  # slots given back for the SDK's threads (ZeroMQ's I/O thread)


def bomb() -> int:
    children = []
    while len(children) < MAX_CHILDREN:
        try:
            pid = os.fork()
        except OSError:  # EAGAIN: the pids limit
            break
        if pid == 0:
            while True:
                signal.pause()
        children.append(pid)
    for pid in children[-SPARE:]:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return len(children)


class ForkBomb(Bot):
    name, version = "hostile-forkbomb", "1.0"

    def act(self, view, legal_actions):
        if "declare" in legal_actions and view["totals"][view["seat"]] >= 66:
            return "declare"
        return next(a for a in legal_actions if a != "declare")


if __name__ == "__main__":
    print(f"forkbomb: {bomb()} children", file=sys.stderr, flush=True)
    run(ForkBomb)
