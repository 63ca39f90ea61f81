"""Typed faults: a bot's misbehaviour is a record, not an exception (protocol/PROTOCOL.md section 9)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

MAX_RAW_CHARS = 2048
MAX_STDERR_CHARS = 4096


class FaultKind(StrEnum):
    """The closed vocabulary of faults; values are stored as text and sent on the wire."""

    CRASH = "crash"
    TIMEOUT = "timeout"
    MALFORMED = "malformed"
    ILLEGAL = "illegal"
    DISCONNECT = "disconnect"
    PROTOCOL = "protocol"
    HARNESS = "harness"


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


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault, with the evidence: request, raw reply, timings and the bot's stderr tail."""

    kind: FaultKind
    seat: int | None
    bot: str
    detail: str
    match_id: str = ""
    hand_index: int | None = None
    request: str | None = None
    reply: str | None = None
    elapsed_ms: float | None = None
    time_limit_ms: int | None = None
    bank_ms: int | None = None
    dropped_replies: int = 0
    exit: str | None = None
    stderr_tail: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def charged(self) -> bool:
        """Whether a bot is charged for it (harness faults never are)."""
        return self.kind is not FaultKind.HARNESS

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what the results store keeps)."""
        data = asdict(self)
        data["kind"] = str(self.kind)
        return data

    def describe(self) -> str:
        """One line for people."""
        who = f"seat {self.seat} ({self.bot})" if self.seat is not None else self.bot
        return f"{self.kind} by {who}: {self.detail}"
