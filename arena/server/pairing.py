"""Which pairing the ladder plays next: every pairing up to a floor first, then the uncertain ones.

Pure and deterministic (ties go to the lowest entrant numbers), so it is tested on its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations

Pairing = tuple[int, int]


def next_pairing(active: Sequence[int], played: Counter[Pairing], sigma: Mapping[int, float],
                 floor: int) -> Pairing | None:
    """The next pairing among ``active`` entrants, or None with fewer than two.

    ``played`` counts the pairs each pairing has (stored or in flight), keyed by the sorted
    pair of entrants. While some pairing has fewer than ``floor`` pairs, the one with the
    fewest is next: a late entrant meets everyone soon. After that the pairing whose ratings
    are least certain for the games it already had goes first (largest
    ``(sigma_a^2 + sigma_b^2) / (1 + played)``): new and uncertain bots get more games, and
    no pairing starves since its share grows as others are played.
    """
    pairings = list(combinations(sorted(active), 2))
    if not pairings:
        return None
    below = [p for p in pairings if played[p] < floor]
    if below:
        return min(below, key=lambda p: (played[p], p))
    return min(pairings, key=lambda p: (-(sigma[p[0]] ** 2 + sigma[p[1]] ** 2) / (1 + played[p]), p))
