"""An ordinary bot that logs a line to stderr at start-up and at every decision."""

import sys

from protocol.client import Bot, run


class Chatty(Bot):
    name, version = "chatty", "1"

    def act(self, view, legal_actions):
        choice = next((a for a in legal_actions if a != "declare"), legal_actions[0])
        if "declare" in legal_actions and view["totals"][view["seat"]] >= 66:
            choice = "declare"
        print(f"chatty: {len(legal_actions)} legal actions, playing {choice}", file=sys.stderr, flush=True)
        return choice


if __name__ == "__main__":
    print("chatty: starting", file=sys.stderr, flush=True)
    run(Chatty)
