"""The generalised SPRT on duplicate-pair outcomes, in normalised Elo (as fishtest and fastchess).

A pair's score for the new bot is the mean of its two matches: 0, 1/2 or 1 (Sixty-Six has no
draws, so of the pentanomial's five pair outcomes only these three occur: a trinomial over
pairs). Hypotheses are stated in normalised Elo, ``nElo = (800 / ln 10) * (mu - 1/2) / sigma``
per match, so a pair's t-value ``(mu - 1/2) / sigma_pair`` is ``sqrt(2)`` times the per-match one,
as in the pentanomial model. The log-likelihood ratio is the generalised one: the observed
pair distribution (zero counts regularised to 1e-3) against the maximum-likelihood
distributions whose t-values are those of ``elo0`` and ``elo1`` (Van den Bergh's "normalized
Elo" construction, solved through its secular equation). The test stops at
``lower = ln(beta / (1 - alpha))`` (accept H0) or ``upper = ln((1 - beta) / alpha)`` (accept H1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .pairgames import PairGames
from .pairstats import trinomial

NELO_PER_T = 800.0 / math.log(10.0)
REGULARISER = 1e-3
_MAX_ITERATIONS = 10
_BISECTIONS = 200


@dataclass(frozen=True, slots=True)
class Bounds:
    """Where the test stops."""

    lower: float
    upper: float

    @classmethod
    def of(cls, alpha: float, beta: float) -> Bounds:
        """The bounds for error rates ``alpha`` (false H1) and ``beta`` (false H0)."""
        if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
            raise ValueError(f"alpha and beta must be between 0 and 1, got {alpha} and {beta}")
        return cls(math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha))

    def decide(self, llr: float) -> str | None:
        """``"H1"``, ``"H0"`` or None (go on)."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None


Pdf = list[tuple[float, float]]  # (score, probability), scores ascending


def _stats(pdf: Pdf) -> tuple[float, float]:
    mean = sum(p * a for a, p in pdf)
    return mean, sum(p * (a - mean) ** 2 for a, p in pdf)


def _secular(pdf: Pdf) -> float:
    """The root x of sum_i p_i a_i / (1 + x a_i) = 0 between the poles (needs min a < 0 < max a)."""
    values = [a for a, _ in pdf]
    low, high = -1.0 / max(values), -1.0 / min(values)
    if not low < high:
        raise ValueError("the secular equation has no root: every outcome lies on one side")

    def f(x: float) -> float:
        return sum(p * a / (1.0 + x * a) for a, p in pdf)

    low, high = low + 1e-12 * (high - low), high - 1e-12 * (high - low)
    f_low = f(low)
    for _ in range(_BISECTIONS):
        mid = 0.5 * (low + high)
        f_mid = f(mid)
        if (f_mid > 0) == (f_low > 0):
            low, f_low = mid, f_mid
        else:
            high = mid
    return 0.5 * (low + high)


def _mle_with_t_value(observed: Pdf, t: float) -> Pdf:
    """The distribution on the observed outcomes that is most likely given ``observed`` among
    those whose t-value ``(mu - 1/2) / sigma`` is ``t``."""
    n = len(observed)
    pdf = [(a, 1.0 / n) for a, _ in observed]
    for _ in range(_MAX_ITERATIONS):
        previous = pdf
        mean, variance = _stats(pdf)
        sigma = math.sqrt(variance)
        shifted = [(a - 0.5 - t * sigma * (1.0 + ((mean - a) / sigma) ** 2) / 2.0, p) for a, p in observed]
        x = _secular(shifted)
        pdf = [(observed[i][0], observed[i][1] / (1.0 + x * shifted[i][0])) for i in range(n)]
        if max(abs(a[1] - b[1]) for a, b in zip(previous, pdf)) < 1e-9:
            break
    return pdf


def pair_pdf(counts: Sequence[int]) -> tuple[float, Pdf]:
    """(total, distribution) of pair outcome counts over equally spaced scores 0 .. 1 (3 or 5 of
    them: pairs lost, split, won; or the pentanomial LL, LD, DD+WL, WD, WW)."""
    if len(counts) not in (3, 5) or any(c < 0 for c in counts):
        raise ValueError(f"give 3 or 5 non-negative pair counts, got {list(counts)}")
    regular = [float(c) if c else REGULARISER for c in counts]
    total = sum(regular)
    return total, [(i / (len(regular) - 1), c / total) for i, c in enumerate(regular)]


def llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The generalised log-likelihood ratio of H1 (nElo ``elo1``) against H0 (nElo ``elo0``)."""
    if sum(counts) == 0:
        return 0.0
    total, observed = pair_pdf(counts)
    t0, t1 = (math.sqrt(2.0) * elo / NELO_PER_T for elo in (elo0, elo1))
    h0, h1 = _mle_with_t_value(observed, t0), _mle_with_t_value(observed, t1)
    return total * sum(p * (math.log(q1) - math.log(q0)) for (_, p), (_, q0), (_, q1) in zip(observed, h0, h1))


def trinomial_llr(won: int, split: int, lost: int, elo0: float, elo1: float) -> float:
    """``llr`` of the new bot's pairs won 2-0, split 1-1 and lost 0-2."""
    return llr((lost, split, won), elo0, elo1)


@dataclass(frozen=True, slots=True)
class SprtStatus:
    """Where a test stands after ``pairs`` pairs in schedule order (the ``--json`` line's fields)."""

    llr: float
    lower: float
    upper: float
    result: str | None  # "H1", "H0", "max-pairs", or None while it goes on
    pairs: int
    won: int
    split: int
    lost: int
    elo: float | None  # None where infinite: see the score
    elo_ci95: tuple[float | None, float | None]
    los: float | None
    score: float | None
    score_ci95: tuple[float | None, float | None]

    def to_dict(self) -> dict[str, object]:
        """The final JSON line of ``arena sprt --json``."""
        return {"llr": self.llr, "lower": self.lower, "upper": self.upper, "result": self.result,
                "pairs": self.pairs, "elo": self.elo, "elo_ci95": list(self.elo_ci95), "los": self.los}


class SprtTracker:
    """Follows a test pair by pair in schedule order (so a resumed run decides exactly as an
    uninterrupted one): pairs ``0 .. k-1`` count once all of them are stored; the test stops at
    the first ``k`` whose LLR crosses a bound, or at ``max_pairs``.

    The test is H0 nElo ``elo0`` against H1 nElo ``elo1`` at error rates ``alpha`` (false H1)
    and ``beta`` (false H0); ValueError if they make no test.
    """

    def __init__(self, *, elo0: float, elo1: float, alpha: float, beta: float, max_pairs: int) -> None:
        if not elo0 < elo1:
            raise ValueError(f"elo0 must be below elo1, got {elo0} and {elo1}")
        self.elo0, self.elo1, self.bounds = elo0, elo1, Bounds.of(alpha, beta)
        self.max_pairs = max_pairs
        self.counts = [0, 0, 0]  # the new bot's pairs lost, split, won
        self.path: list[float] = []  # the LLR after each counted pair
        self.status = self._status(None)

    def update(self, games: Sequence[PairGames]) -> SprtStatus:
        """Count the stored pairs that extend the schedule-order prefix; the status after them."""
        by_index = {pair.index: pair for pair in games}
        while self.status.result is None and len(self.path) in by_index:
            pair = by_index[len(self.path)]
            if pair.decided == 2:  # a pair with a void half is played but not counted
                self.counts[pair.a_wins if pair.a == 0 else pair.b_wins] += 1
            value = llr(self.counts, self.elo0, self.elo1)
            self.path.append(value)
            decided = self.bounds.decide(value) or ("max-pairs" if len(self.path) >= self.max_pairs else None)
            self.status = self._status(decided)
        return self.status

    def _status(self, result: str | None) -> SprtStatus:
        lost, split, won = self.counts
        stats = trinomial(won, split, lost)
        bounds = self.bounds
        return SprtStatus(self.path[-1] if self.path else 0.0, bounds.lower, bounds.upper, result, len(self.path),
                          won, split, lost, stats.elo, stats.elo_ci95, stats.los, stats.score, stats.score_ci95)
