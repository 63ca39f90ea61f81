"""The decision clock: a per-decision limit plus a match bank that only overage drains."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Time limits in milliseconds (protocol/PROTOCOL.md section 5)."""

    time_limit_ms: int = 1000
    bank_ms: int = 10_000
    handshake_ms: int = 10_000

    def __post_init__(self) -> None:
        for name in ("time_limit_ms", "bank_ms", "handshake_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"time control {name} must be a whole number of ms >= 0, got {value!r}")
        if self.time_limit_ms == 0 or self.handshake_ms == 0:
            raise ValueError("time control: time_limit_ms and handshake_ms must be positive")


class MatchClock:
    """Both seats' banks for one match; every wait is derived here."""

    __slots__ = ("control", "bank_ms")

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.bank_ms = [float(control.bank_ms), float(control.bank_ms)]

    def budget_s(self, seat: int) -> float:
        """Seconds ``seat`` may take on its next decision before it times out."""
        return (self.control.time_limit_ms + max(self.bank_ms[seat], 0.0)) / 1000.0

    def bank_left_ms(self, seat: int) -> int:
        """The whole milliseconds left in ``seat``'s bank (what a request carries)."""
        return max(int(self.bank_ms[seat]), 0)

    def charge(self, seat: int, elapsed_s: float) -> bool:
        """Charge one decision's time; False when it outlasted the limit plus the bank."""
        over_ms = elapsed_s * 1000.0 - self.control.time_limit_ms
        if over_ms > 0:
            self.bank_ms[seat] -= over_ms
        return self.bank_ms[seat] >= 0
