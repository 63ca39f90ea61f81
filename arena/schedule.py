"""Tournament formats -> pairs of matches, each with its deal seed (see ``arena.engine.deals``).

A **pair** is the unit of scheduling: the same decks played twice with the seats swapped
(half 0: ``a`` in seat 0; half 1: ``b`` in seat 0). Both halves share one match seed, so
both see the same deals. Pairs are ordered round by round (every pairing once, then again),
so a tournament stopped early is still balanced. Ratings are computed in this order. The
``Pair`` record is the engine's (``arena.engine.records``): the store keeps the schedule too.
"""

from __future__ import annotations

import os
from enum import StrEnum
from itertools import combinations

from arena.engine.deals import KEY_BYTES, Deals
from arena.engine.records import Pair


class Format(StrEnum):
    """Tournament formats."""

    ROUND_ROBIN = "round_robin"
    DOUBLE_ROUND_ROBIN = "double_round_robin"
    GAUNTLET = "gauntlet"


def new_key() -> bytes:
    """A fresh secret deal key for a new tournament (the engine computes seeds, the harness draws keys)."""
    return os.urandom(KEY_BYTES)


def pairings(n_entrants: int, fmt: Format | str) -> list[tuple[int, int]]:
    """Who meets whom once per round: every two entrants, or entrant 0 against each other."""
    fmt = Format(fmt)
    if n_entrants < 2:
        raise ValueError(f"a tournament needs at least 2 bots, got {n_entrants}")
    if fmt is Format.GAUNTLET:
        return [(0, other) for other in range(1, n_entrants)]
    return list(combinations(range(n_entrants), 2))


def schedule(n_entrants: int, fmt: Format | str, pairs_per_pairing: int, deals: Deals) -> list[Pair]:
    """Every pair of the tournament in schedule order, with the seed ``deals`` gives it."""
    if pairs_per_pairing < 1:
        raise ValueError(f"pairs_per_pairing must be at least 1, got {pairs_per_pairing}")
    rounds = pairs_per_pairing * (2 if Format(fmt) is Format.DOUBLE_ROUND_ROBIN else 1)
    pairs: list[Pair] = []
    for _ in range(rounds):
        for a, b in pairings(n_entrants, fmt):
            index = len(pairs)
            pairs.append(Pair(index, a, b, deals.pair_seed(index)))
    return pairs
