"""Hostile bot: starts 6 processes that spin on the CPU for as long as the bot lives (meant to
slow every other bot on the machine down, and to think on the opponent's time), each asking to
run on every core of the machine, then plays legal moves. Under the arena's control groups it
is frozen while it owes no answer, capped at one CPU while it does, and in lock-step play held
to its worker's core (a cpuset, which its affinity request cannot widen): only its own answers
can get slow."""

import os

from protocol.client import Bot, run

SPINNERS = 6


def spin_forever() -> None:
    for _ in range(SPINNERS):
        if os.fork() == 0:
            try:
                os.sched_setaffinity(0, range(os.cpu_count() or 1))  # every core, if it were allowed
            except OSError:
                pass
            while True:
                pass


class CpuHog(Bot):
    name, version = "hostile-cpuhog", "1.0"

    def act(self, view, legal_actions):
        if "declare" in legal_actions and view["totals"][view["seat"]] >= 66:
            return "declare"
        return next(a for a in legal_actions if a != "declare")


if __name__ == "__main__":
    spin_forever()
    run(CpuHog)
