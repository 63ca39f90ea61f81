"""Batch Bradley-Terry standings with bootstrap uncertainty, on the Elo scale.

The model: P(i beats j) = 1 / (1 + 10^((elo_j - elo_i) / 400)), one order-independent fit over
every decided match. It is a maximum a posteriori fit in which each bot also gets one virtual
win and one virtual loss against a fixed virtual opponent of Elo 0, which keeps unbeaten and
winless bots finite; the Elos are then shifted so that the real bots' mean is 0.

Uncertainty comes from a seeded bootstrap over *pairs* (both halves together: the duplicate
pair is the independent unit), resampled within each pairing so that every replicate keeps
the tournament's design. Each replicate is refitted; percentiles give the Elo and rank 95%
intervals, frequencies give P(rank 1), P(top k) and P(row better than column). Bots whose rank
intervals overlap form "statistically tied" groups.

All replicates are fitted at once by Newton's method on the (strictly concave) log posterior,
as batched numpy linear algebra.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .bt_defaults import DEFAULT_REPLICATES, DEFAULT_SEED, DEFAULT_TOP_K
from .pairgames import PairGames

ELO_PER_NAT = 400.0 / math.log(10.0)
PRIOR = "1 win + 1 loss vs Elo 0"
_MAX_NEWTON_STEPS = 100
_TOLERANCE = 1e-11  # largest Newton step (natural-log units, ~4e-9 Elo) at convergence
_MAX_STEP = 4.0  # natural-log units per Newton step, against overshoot on extreme data

Floats = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class BTStanding:
    """One bot's Bradley-Terry line (the ``"bt"`` object of ``leaderboard.json``)."""

    elo: float
    elo_ci95: tuple[float, float]
    rank_ci95: tuple[int, int]
    p_top1: float


@dataclass(frozen=True, slots=True)
class BTFit:
    """Standings of every entrant (by entrant number) and the bootstrap's joint figures."""

    standings: list[BTStanding]
    p_top_k: list[float]
    top_k: int
    p_better: list[list[float | None]]  # [row][column]: P(row's Elo > column's), ties counted half
    tied_groups: list[list[int]]  # entrants, best first, of each group of 2+ overlapping rank intervals
    replicates: int
    seed: int


def win_matrix(games: Sequence[PairGames], n: int) -> Floats:
    """``W[i, j]``: matches ``i`` won against ``j``."""
    wins = np.zeros((n, n))
    for pair in games:
        wins[pair.a, pair.b] += pair.a_wins
        wins[pair.b, pair.a] += pair.b_wins
    return wins


def fit_strengths(wins: Floats, start: Floats | None = None) -> Floats:
    """MAP log-strengths (natural log, virtual opponent at 0) for one ``(n, n)`` or many
    ``(B, n, n)`` win matrices; Newton's method from ``start`` (default 0: the MAP is unique)."""
    batch = wins if wins.ndim == 3 else wins[np.newaxis]
    games = batch + np.swapaxes(batch, 1, 2)
    won = batch.sum(axis=2)
    strength = np.zeros(batch.shape[:2]) if start is None else np.broadcast_to(start, batch.shape[:2]).copy()
    eye = np.eye(batch.shape[1])
    for _ in range(_MAX_NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(strength[:, np.newaxis, :] - strength[:, :, np.newaxis]))  # P(i beats j)
        prior_p = 1.0 / (1.0 + np.exp(-strength))  # P(i beats the virtual opponent)
        gradient = won - (games * p).sum(axis=2) + 1.0 - 2.0 * prior_p
        curvature = games * p * (1.0 - p)
        hessian = curvature - eye * (curvature.sum(axis=2) + 2.0 * prior_p * (1.0 - prior_p))[:, :, np.newaxis]
        step = np.linalg.solve(hessian, gradient[:, :, np.newaxis])[:, :, 0]
        strength -= np.clip(step, -_MAX_STEP, _MAX_STEP)
        if np.abs(step).max() < _TOLERANCE:
            break
    return strength if wins.ndim == 3 else strength[0]


def to_elo(strength: Floats) -> Floats:
    """Log-strengths -> Elo with the real bots' mean at 0 (along the last axis)."""
    elo = strength * ELO_PER_NAT
    shifted: Floats = elo - elo.mean(axis=-1, keepdims=True)
    return shifted


def bootstrap_wins(games: Sequence[PairGames], n: int, replicates: int, seed: int) -> Floats:
    """``(replicates, n, n)`` win matrices, each from the pairs resampled within every pairing."""
    rng = np.random.default_rng(seed)
    by_pairing: dict[tuple[int, int], dict[tuple[int, int], int]] = defaultdict(lambda: defaultdict(int))
    for pair in games:
        low, high = sorted((pair.a, pair.b))
        wins = (pair.a_wins, pair.b_wins) if pair.a == low else (pair.b_wins, pair.a_wins)
        by_pairing[(low, high)][wins] += 1
    flat = np.zeros((n * n, replicates))  # one contiguous row per (winner, loser) cell
    for (low, high), kinds in sorted(by_pairing.items()):
        outcomes = sorted(kinds)
        counts = np.array([kinds[o] for o in outcomes], dtype=float)
        draws = rng.multinomial(int(counts.sum()), counts / counts.sum(), size=replicates)
        flat[low * n + high] = draws @ np.array([o[0] for o in outcomes], dtype=float)
        flat[high * n + low] = draws @ np.array([o[1] for o in outcomes], dtype=float)
    return np.ascontiguousarray(flat.T).reshape(replicates, n, n)


def bradley_terry(games: Sequence[PairGames], n: int, *, replicates: int = DEFAULT_REPLICATES,
                  seed: int = DEFAULT_SEED, top_k: int = DEFAULT_TOP_K) -> BTFit:
    """The fit of ``n`` entrants on ``games`` with its bootstrap (see the module docstring)."""
    if replicates < 1:
        raise ValueError(f"the bootstrap needs at least 1 replicate, got {replicates}")
    strength = fit_strengths(win_matrix(games, n))
    elo = to_elo(strength)
    samples = to_elo(fit_strengths(bootstrap_wins(games, n, replicates, seed), start=strength))  # (B, n)
    ranks = 1 + (samples[:, np.newaxis, :] > samples[:, :, np.newaxis]).sum(axis=2)  # (B, n): 1 = best
    ordered, ordered_ranks = np.sort(samples, axis=0), np.sort(ranks, axis=0)
    elo_lo, elo_hi = percentile(ordered, 2.5), percentile(ordered, 97.5)
    rank_lo, rank_hi = percentile(ordered_ranks, 2.5, "lower"), percentile(ordered_ranks, 97.5, "higher")
    better = (samples[:, :, np.newaxis] > samples[:, np.newaxis, :]).mean(axis=0)
    better += 0.5 * (samples[:, :, np.newaxis] == samples[:, np.newaxis, :]).mean(axis=0)
    np.fill_diagonal(better, np.nan)
    standings = [
        BTStanding(elo=float(elo[i]), elo_ci95=(float(elo_lo[i]), float(elo_hi[i])),
                   rank_ci95=(int(rank_lo[i]), int(rank_hi[i])), p_top1=float((ranks[:, i] == 1).mean()))
        for i in range(n)
    ]
    return BTFit(
        standings=standings,
        p_top_k=[float((ranks[:, i] <= top_k).mean()) for i in range(n)],
        top_k=top_k,
        p_better=[[None if math.isnan(v) else float(v) for v in row] for row in better.tolist()],
        tied_groups=tied_groups(elo.tolist(), [s.rank_ci95 for s in standings]),
        replicates=replicates,
        seed=seed,
    )


def percentile(ordered: NDArray[Any], q: float, method: str = "linear") -> NDArray[Any]:
    """``np.percentile(a, q, axis=0, method=method)`` for the ``a`` whose columns ``ordered`` holds
    sorted, to the last bit, for the methods ``linear`` (numpy's default), ``lower`` and ``higher``.

    np.percentile interpolates through np.unique, whose first call imports numpy.ma: some 20 ms
    of every leaderboard printed at the end of a run.
    """
    last = ordered.shape[0] - 1
    virtual = last * (q / 100)
    low = math.floor(virtual)
    if method == "higher":
        low = math.ceil(virtual)
    if method != "linear" or low >= last:
        row: NDArray[Any] = ordered[min(low, last)]
        return row
    a: NDArray[Any] = ordered[low]
    b: NDArray[Any] = ordered[low + 1]
    t = virtual - low
    between: NDArray[Any] = b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t  # numpy's _lerp
    return between


def tied_groups(elo: Sequence[float], rank_ci95: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Groups (best first) of two or more entrants joined by overlapping rank intervals."""
    order = sorted(range(len(elo)), key=lambda e: (rank_ci95[e][0], -elo[e]))
    groups: list[list[int]] = []
    reach = 0
    for entrant in order:
        low, high = rank_ci95[entrant]
        if groups and low <= reach:
            groups[-1].append(entrant)
            reach = max(reach, high)
        else:
            groups.append([entrant])
            reach = high
    return [sorted(g, key=lambda e: -elo[e]) for g in groups if len(g) > 1]
