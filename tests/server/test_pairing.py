"""The ladder's choice of the next pairing."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.server.pairing import Pairing, next_pairing

pytestmark = pytest.mark.unit


def play(active: list[int], sigma: dict[int, float], floor: int, rounds: int,
         played: Counter[Pairing] | None = None) -> Counter[Pairing]:
    played = played if played is not None else Counter()
    for _ in range(rounds):
        pairing = next_pairing(active, played, sigma, floor)
        assert pairing is not None
        played[pairing] += 1
    return played


def test_fewer_than_two_bots_play_nothing() -> None:
    assert next_pairing([], Counter(), {}, 2) is None
    assert next_pairing([3], Counter(), {3: 1.0}, 2) is None


def test_every_pairing_reaches_the_floor_first_and_a_late_entrant_catches_up() -> None:
    sigma = {0: 2.0, 1: 2.0, 2: 2.0}
    played = play([0, 1, 2], sigma, floor=3, rounds=9)
    assert played == Counter({(0, 1): 3, (0, 2): 3, (1, 2): 3})
    sigma[3] = 8.0  # a late entrant: no games yet, uncertain
    play([0, 1, 2, 3], sigma, floor=3, rounds=9, played=played)
    assert played[(0, 3)] == played[(1, 3)] == played[(2, 3)] == 3


def test_after_the_floor_uncertain_bots_get_more_games() -> None:
    sigma = {0: 1.0, 1: 1.0, 2: 6.0}
    played = play([0, 1, 2], sigma, floor=1, rounds=60)
    with_uncertain = played[(0, 2)] + played[(1, 2)]
    assert with_uncertain > 3 * played[(0, 1)] > 0


@settings(deadline=None)  # pure and fast; only a loaded machine makes an example slow
@given(st.lists(st.floats(0.5, 9.0), min_size=2, max_size=6), st.integers(0, 3), st.integers(1, 80))
def test_no_pairing_starves(sigmas: list[float], floor: int, rounds: int) -> None:
    active = list(range(len(sigmas)))
    sigma = dict(enumerate(sigmas))
    played = play(active, sigma, floor, rounds)
    pairings = len(active) * (len(active) - 1) // 2
    if rounds >= pairings * max(floor, 1):
        assert min(played[(a, b)] for a in active for b in active if a < b) >= max(floor, 1) or floor == 0
    # the ratio bound: the most played pairing has at most (9/0.5)^2 * 2 + 1 times the games of the least + 1
    counts = [played[(a, b)] for a in active for b in active if a < b]
    assert max(counts) <= 2 * (9.0 / 0.5) ** 2 * (min(counts) + 1) + max(floor, 1)
