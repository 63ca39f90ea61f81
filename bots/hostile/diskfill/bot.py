"""Hostile bot: fills every writable place until refused, then plays like greedy on a full disk.

Before its hello it writes files of at most 8 MiB (under the 16 MiB file-size limit) in its
working directory, ``/tmp``, ``/dev/shm`` and ``/dev``, each until a write fails,
and prints one stderr line per place and a summary (the test reads the bot's log)::

    diskfill: FILLED /tmp/work 47.0 MiB, then OSError: [Errno 28] No space left on device
    diskfill: REPORT {"places": {"/tmp/work": {"bytes": ..., "error": ...}, ...}, "total_bytes": ...}

Then it plays, and writes one more block at every decision (each refused). It attacks only when
it finds itself sandboxed (``/arena-sdk``): in the fallback it would fill the host's disk.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from botkit.bots import GreedyBot
from protocol.client import run

BLOCK = b"\xa5" * (1 << 20)
FILE_BYTES = 8 << 20
PLACES = (Path.cwd(), Path("/tmp"), Path("/dev/shm"), Path("/dev"))


def fill(folder: Path) -> dict[str, Any]:
    """Write into new files in ``folder`` until a write fails; how many bytes landed, and why it
    stopped (unbuffered writes: a partial write counts what it wrote)."""
    written, index = 0, 0
    while True:
        try:
            fd = os.open(folder / f"fill-{index}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as exc:
            return {"bytes": written, "error": f"{type(exc).__name__}: {exc}"}
        try:
            in_file = 0
            while in_file < FILE_BYTES:
                in_file += os.write(fd, BLOCK[: FILE_BYTES - in_file])
            written += in_file
        except OSError as exc:
            return {"bytes": written + in_file, "error": f"{type(exc).__name__}: {exc}"}
        finally:
            os.close(fd)
        index += 1


def attack() -> None:
    if not Path("/arena-sdk").is_dir():
        print("diskfill: SKIPPED: not sandboxed, this would fill the host's disk", file=sys.stderr, flush=True)
        return
    places = {}
    for folder in PLACES:
        places[str(folder)] = result = fill(folder)
        print(f"diskfill: FILLED {folder} {result['bytes'] / (1 << 20):.1f} MiB, then {result['error']}",
              file=sys.stderr, flush=True)
    total = sum(p["bytes"] for p in places.values())
    print("diskfill: REPORT " + json.dumps({"places": places, "total_bytes": total}, sort_keys=True),
          file=sys.stderr, flush=True)


class DiskFillBot(GreedyBot):
    """Greedy's play on a full disk: one more (refused) block at every decision."""

    name = "diskfill"
    version = "1.0"
    max_games = 8

    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str:
        try:
            with open(f"more-{os.getpid()}", "ab") as fh:
                fh.write(BLOCK)
        except OSError:
            pass  # the disk is full: its own business
        return super().act(view, legal_actions)


if __name__ == "__main__":
    attack()
    run(DiskFillBot)
