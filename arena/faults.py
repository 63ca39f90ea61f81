"""The fault policy and the evidence's limits; the ``Fault`` record itself is in ``arena.engine.records``
(protocol/PROTOCOL.md section 9)."""

from __future__ import annotations

from enum import StrEnum

MAX_RAW_CHARS = 2048
MAX_STDERR_CHARS = 4096


class FaultPolicy(StrEnum):
    """What a fault costs: ``strict`` forfeits the match, ``lenient`` plays on (protocol/PROTOCOL.md section 9)."""

    STRICT = "strict"
    LENIENT = "lenient"


def truncate(text: str | bytes | None, limit: int = MAX_RAW_CHARS) -> str | None:
    """``text`` cut to ``limit`` characters (bytes decoded with replacement), marked if cut."""
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text[: limit * 4].decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more]"
