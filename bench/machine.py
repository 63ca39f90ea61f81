"""What the benches say about the machine they ran on (imported by the bench scripts beside it)."""

from __future__ import annotations

from pathlib import Path


def load_average() -> str:
    """The one-minute load average, as /proc/loadavg prints it ("?" where there is none)."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"
