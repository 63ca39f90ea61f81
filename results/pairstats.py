"""Head-to-head statistics over duplicate pairs: 2-0 / 1-1 / 0-2, score, Elo with a 95% interval, LOS.

A pair's two matches share their decks, so the pair (not the match) is the independent
unit and its outcome is trinomial: the row bot scores 1, 1/2 or 0 of the pair. With ``N``
fully decided pairs, mean score ``s`` and per-pair variance ``v``, the standard error is
``sqrt(v / N)``; the Elo is the logistic inverse ``-400 log10(1/s - 1)`` of the score and of
the interval's ends ``s +- 1.96 se`` (None where that is infinite), and the likelihood of
superiority is ``LOS = Phi((s - 1/2) / se)``, as fastchess and cutechess report over game pairs.
Pairs with a void half are left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .pairgames import PairGames

Z95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class PairStats:
    """The row bot's record against one opponent, over their fully decided pairs."""

    won: int  # pairs won 2-0
    split: int  # 1-1
    lost: int  # 0-2
    score: float | None  # share of the pairs' points (None without pairs)
    score_ci95: tuple[float | None, float | None]
    elo: float | None  # None where infinite (score 0 or 1; see the score) or without pairs
    elo_ci95: tuple[float | None, float | None]
    los: float | None

    @property
    def pairs(self) -> int:
        """Fully decided pairs."""
        return self.won + self.split + self.lost


def score_to_elo(score: float) -> float | None:
    """The Elo difference that expects ``score`` (None at 0 or 1, where it is infinite)."""
    if not 0.0 < score < 1.0:
        return None
    return -400.0 * math.log10(1.0 / score - 1.0)


def trinomial(won: int, split: int, lost: int) -> PairStats:
    """The statistics of ``won`` 2-0, ``split`` 1-1 and ``lost`` 0-2 pairs."""
    n = won + split + lost
    if n == 0:
        return PairStats(won, split, lost, None, (None, None), None, (None, None), None)
    score = (won + 0.5 * split) / n
    variance = (won * (1.0 - score) ** 2 + split * (0.5 - score) ** 2 + lost * score ** 2) / n
    error = math.sqrt(variance / n)
    if error == 0.0:
        los = 0.5 if score == 0.5 else float(score > 0.5)
    else:
        los = 0.5 * (1.0 + math.erf((score - 0.5) / (error * math.sqrt(2.0))))
    low, high = max(0.0, score - Z95 * error), min(1.0, score + Z95 * error)
    return PairStats(won, split, lost, score, (low, high), score_to_elo(score), (score_to_elo(low), score_to_elo(high)),
                     los)


def head_to_head(games: Sequence[PairGames]) -> dict[tuple[int, int], PairStats]:
    """``(row, column)`` -> the row's statistics against the column, for every two entrants that met."""
    counts: dict[tuple[int, int], list[int]] = {}
    for pair in games:
        if pair.decided != 2:
            continue
        for row, column, row_wins in ((pair.a, pair.b, pair.a_wins), (pair.b, pair.a, pair.b_wins)):
            counts.setdefault((row, column), [0, 0, 0])[2 - row_wins] += 1
    return {key: trinomial(*value) for key, value in sorted(counts.items())}
