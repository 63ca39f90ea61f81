"""Waiting for a condition with a deadline (never a bare sleep hoping a race goes away)."""

from __future__ import annotations

import time
from collections.abc import Callable


def poll_until(condition: Callable[[], object], timeout: float, interval: float) -> object:
    """``condition()``'s first truthy value within ``timeout`` seconds, polled every
    ``interval``; after the deadline, whatever one last call returns."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    return condition()
