"""Stored match rows -> the rating input: each match's winner and loser (``stored_result``, the
one conversion every rater, count and statistic uses), and per pair who met whom and how many
matches each won.

A pair (the same decks twice, seats swapped) is the statistical unit of the Bradley-Terry
bootstrap and of the head-to-head statistics. Void matches (harness faults) count for no one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .rows import MatchRow


def stored_result(match: MatchRow) -> tuple[int, int] | None:
    """A stored match as ``(winner entrant, loser entrant)``, from the entrants on its seats;
    None for a void match (or one without a winner)."""
    winner_seat = match.winner_seat
    if match.void or winner_seat is None:
        return None
    seats = match.seats
    return seats[winner_seat], seats[1 - winner_seat]


@dataclass(frozen=True, slots=True)
class PairGames:
    """Pair ``index`` between entrants ``a`` (seat 0 of the first half) and ``b``: matches each won."""

    index: int
    a: int
    b: int
    a_wins: int
    b_wins: int

    @property
    def decided(self) -> int:
        """Matches of the pair with a winner (0, 1 or 2)."""
        return self.a_wins + self.b_wins


def pair_games(matches: Iterable[MatchRow]) -> list[PairGames]:
    """Stored match rows (``Store.matches``) grouped into pairs, in schedule order."""
    found: dict[int, list[int]] = {}  # pair index -> [a, b, a_wins, b_wins]
    for match in matches:
        seats = match.seats
        entry = found.setdefault(match.pair_index, [*(seats if match.half == 0 else seats[::-1]), 0, 0])
        result = stored_result(match)
        if result is not None:
            entry[2 if result[0] == entry[0] else 3] += 1
    return [PairGames(index, *entry) for index, entry in sorted(found.items())]
