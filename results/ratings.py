"""TrueSkill ratings of 1-vs-1 match results, applied in schedule order.

Ratings use an explicit ``trueskill.TrueSkill`` environment (never the global one) with a
draw probability near 0, since a Sixty-Six match cannot tie. ``RatingEnv.rate`` is the
closed form of TrueSkill's two-player update, using the environment's own ``v_win``,
``w_win``, ``beta``, ``tau`` and draw margin; a test checks it against ``rate_1vs1`` to 1e-9.
It avoids building a factor graph per match, which makes 100,000 updates a few seconds.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass

import trueskill

from .pairgames import stored_result
from .rows import MatchRow

log = logging.getLogger(__name__)

DRAW_PROBABILITY = 0.001


@dataclass(frozen=True, slots=True)
class Rating:
    """A skill estimate: mean and standard deviation."""

    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """mu - 3 sigma: the rank key (computed explicitly, not with ``expose``)."""
        return self.mu - 3.0 * self.sigma


class RatingEnv:
    """A TrueSkill environment for 1-vs-1 results with no draws."""

    def __init__(self, mu: float = 25.0, sigma: float = 25.0 / 3.0, draw_probability: float = DRAW_PROBABILITY) -> None:
        self.env = trueskill.TrueSkill(mu=mu, sigma=sigma, draw_probability=draw_probability, backend=None)
        self.draw_margin = trueskill.calc_draw_margin(draw_probability, 2, env=self.env)

    def initial(self) -> Rating:
        """The rating of a bot with no results."""
        return Rating(self.env.mu, self.env.sigma)

    def rate(self, winner: Rating, loser: Rating) -> tuple[Rating, Rating]:
        """New ratings after ``winner`` beat ``loser`` (TrueSkill's 1-vs-1 update)."""
        tau2 = self.env.tau**2
        w_var = winner.sigma**2 + tau2
        l_var = loser.sigma**2 + tau2
        c2 = 2.0 * self.env.beta**2 + w_var + l_var
        c = math.sqrt(c2)
        t = (winner.mu - loser.mu) / c
        eps = self.draw_margin / c
        try:
            v = self.env.v_win(t, eps)
            w = self.env.w_win(t, eps)
        except FloatingPointError:
            # An upset across a gap of ~56 beta underflows the Gaussian tail (trueskill's own
            # rate_1vs1 fails the same way); no real tournament gets there. Skip the update.
            log.warning("rating update skipped: %s beat %s is beyond floating point", winner, loser)
            return winner, loser
        return (
            Rating(winner.mu + w_var / c * v, math.sqrt(w_var * (1.0 - w_var / c2 * w))),
            Rating(loser.mu - l_var / c * v, math.sqrt(l_var * (1.0 - l_var / c2 * w))),
        )

    def reference_rate(self, winner: Rating, loser: Rating) -> tuple[Rating, Rating]:
        """The same update through ``trueskill.rate_1vs1`` (slow; for checks)."""
        new_w, new_l = trueskill.rate_1vs1(self.env.create_rating(winner.mu, winner.sigma),
                                           self.env.create_rating(loser.mu, loser.sigma), env=self.env)
        return Rating(new_w.mu, new_w.sigma), Rating(new_l.mu, new_l.sigma)


# A pair's rated results: for each half, (winner entrant, loser entrant), or None for a void match.
PairResults = list[tuple[int, int] | None]


def stored_pair_results(matches: Iterable[MatchRow]) -> dict[int, PairResults]:
    """Stored match rows (schedule order) as TrueSkill input by pair index (``pairgames.stored_result``
    each; the runner, too, rates a pair from the rows it has just stored)."""
    by_pair: dict[int, PairResults] = {}
    for match in matches:
        by_pair.setdefault(match.pair_index, []).append(stored_result(match))
    return by_pair


class ScheduleRater:
    """Ratings advanced over the contiguous prefix of finished pairs, in schedule order.

    Pairs finish out of order in a parallel run; a pair is rated only once every earlier
    pair is, so resumed, cluster and uninterrupted runs produce identical numbers.
    """

    def __init__(self, env: RatingEnv, entrants: int) -> None:
        self.env = env
        self.ratings = {e: env.initial() for e in range(entrants)}
        self.frontier = 0  # the next pair index to rate
        self._waiting: dict[int, PairResults] = {}

    def copy(self) -> ScheduleRater:
        """An independent copy (to compute snapshots that may not be committed)."""
        twin = ScheduleRater(self.env, 0)
        twin.ratings, twin.frontier, twin._waiting = dict(self.ratings), self.frontier, dict(self._waiting)
        return twin

    def restore(self, after_pair: int, ratings: dict[int, Rating]) -> None:
        """Start from a stored snapshot taken after pair ``after_pair``."""
        self.ratings.update(ratings)
        self.frontier = after_pair + 1

    def add(self, pair_index: int, results: PairResults) -> list[tuple[int, dict[int, tuple[float, float]]]]:
        """Take a finished pair; return the snapshots (after_pair, {entrant: (mu, sigma)}) it unlocked."""
        if pair_index >= self.frontier:
            self._waiting[pair_index] = results
        snapshots = []
        while self.frontier in self._waiting:
            _rate_pair(self.env, self.ratings, self._waiting.pop(self.frontier))
            snapshots.append((self.frontier, {e: (r.mu, r.sigma) for e, r in self.ratings.items()}))
            self.frontier += 1
        return snapshots


def rate_in_schedule_order(env: RatingEnv, entrants: int, pairs: list[tuple[int, PairResults]]) -> dict[int, Rating]:
    """Ratings from scratch over every stored ``(pair_index, results)``, in schedule order.

    Gaps (pairs not stored yet) are skipped; once every pair is stored this equals the last
    ``ScheduleRater`` snapshot.
    """
    ratings = {e: env.initial() for e in range(entrants)}
    for _, results in sorted(pairs, key=lambda item: item[0]):
        _rate_pair(env, ratings, results)
    return ratings


def _rate_pair(env: RatingEnv, ratings: dict[int, Rating], results: PairResults) -> None:
    for result in results:
        if result is not None:
            winner, loser = result
            ratings[winner], ratings[loser] = env.rate(ratings[winner], ratings[loser])
