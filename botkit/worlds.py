"""Worlds for search: sampled (or, when few, enumerated) guesses of the hidden cards, and
averaging action values over them (Perfect-Information Monte Carlo)."""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Callable

from arena.engine.core import DECLARE, Core

from .cards import cards_of
from .knowledge import Knowledge, Situation


def candidate_actions(sit: Situation, legal: list[int]) -> list[int]:
    """The actions worth searching: every legal one but a declaration under 66."""
    if DECLARE in legal and sit.total(sit.seat) < 66:
        return [a for a in legal if a != DECLARE]
    return legal


def worlds(know: Knowledge, rng: random.Random, budget: int) -> list[Core]:
    """Up to ``budget`` worlds. In Phase B, where the stock order does not matter, a known
    opponent hand gives one world, and few possible hands are all enumerated (each equally
    likely); otherwise worlds are sampled uniformly."""
    sit = know.situation
    if sit.strict:
        allowed = cards_of(sit.unseen & ~sit.forbidden)
        known = cards_of(sit.opp_known)
        k = know.unknown_count
        if math.comb(len(allowed), k) <= budget:
            out = []
            for theirs in itertools.combinations(allowed, k):
                taken = 0
                for c in theirs:
                    taken |= 1 << c
                out.append(Core.from_view(know.view, known + list(theirs), cards_of(sit.unseen & ~taken), know.rules,
                                          know.absent))
            return out
    return [know.world(rng) for _ in range(max(1, budget))]


def pimc_values(know: Knowledge, actions: list[int], games: list[Core],
                evaluate: Callable[[Core, list[int], int], dict[int, float]],
                deadline: float | None = None) -> dict[int, float]:
    """The mean over ``games`` of ``evaluate(world, actions, seat)`` (a value per action).
    Past ``deadline`` (``time.monotonic()``; a safety net only) the worlds done so far count."""
    seat = know.situation.seat
    sums = dict.fromkeys(actions, 0.0)
    done = 0
    for g in games:
        for a, v in evaluate(g, actions, seat).items():
            sums[a] += v
        done += 1
        if deadline is not None and time.monotonic() > deadline:
            break
    return {a: s / done for a, s in sums.items()}


def best_action(values: dict[int, float], preferred: int, tolerance: float = 1e-9) -> int:
    """The action of highest value; ``preferred`` (the expert's choice) wins ties."""
    top = max(values.values())
    if values.get(preferred, -math.inf) >= top - tolerance:
        return preferred
    return max(values, key=lambda a: values[a])
