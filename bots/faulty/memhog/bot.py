"""Faulty bot: on its second decision allocates memory without bound; the sandbox's
address-space limit ends it (crash).

The chunks are ``bytes`` (calloc'd, so untouched pages cost no RAM): the address-space limit
stops the bot within milliseconds instead of after gigabytes of page faults.
"""

from protocol.client import Bot, run

CHUNK = 16 << 20
HOARD = []


class MemHog(Bot):
    name, version = "faulty-memhog", "1.0"
    decisions = 0

    def act(self, view, legal_actions):
        MemHog.decisions += 1
        if MemHog.decisions >= 2:
            while True:  # until MemoryError; the SDK prints it and exits with status 1
                HOARD.append(bytes(CHUNK))
        return legal_actions[0]


if __name__ == "__main__":
    run(MemHog)
