"""The outcome of a hand."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .fastpickle import by_fields


class Reason(StrEnum):
    """How a hand ended (docs/rules.md R13.5); values are the contract's strings."""

    DECLARED = "declared"
    FALSE_DECLARATION = "false_declaration"
    CLOSE_FAILED = "close_failed"
    CLOSER_OPPONENT_OUT = "closer_opponent_out"
    PLAYED_OUT = "played_out"
    TIE = "tie"


@by_fields
@dataclass(frozen=True, slots=True)
class HandResult:
    """The result of a finished hand.

    ``winner`` is a seat or None for a tie; ``game_points`` is the hand's own 1, 2 or 3
    (0 for a tie) without the tie carry, which ``Match`` adds.
    """

    winner: int | None
    game_points: int
    reason: Reason
    totals: tuple[int, int]
    tricks: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in views, records and the protocol."""
        return {
            "winner": self.winner,
            "game_points": self.game_points,
            "reason": str(self.reason),
            "totals": list(self.totals),
            "tricks": list(self.tricks),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HandResult:
        """The inverse of ``to_dict``."""
        totals, tricks = data["totals"], data["tricks"]
        return cls(
            winner=data["winner"],
            game_points=data["game_points"],
            reason=Reason(data["reason"]),
            totals=(totals[0], totals[1]),
            tricks=(tricks[0], tricks[1]),
        )
