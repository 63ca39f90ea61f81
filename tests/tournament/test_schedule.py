"""Pair schedules (unit)."""

from __future__ import annotations

from collections import Counter

import pytest

from arena.engine.deals import Deals, derive_seed
from arena.schedule import Format, pairings, schedule

pytestmark = pytest.mark.unit


def test_round_robin_meets_everyone_once_per_round_and_swaps_seats() -> None:
    pairs = schedule(4, Format.ROUND_ROBIN, 3, Deals.public(9))
    assert len(pairs) == 6 * 3
    assert [p.index for p in pairs] == list(range(18))
    assert Counter((p.a, p.b) for p in pairs) == {pair: 3 for pair in pairings(4, "round_robin")}
    assert pairs[0].seats(0) == (pairs[0].a, pairs[0].b) and pairs[0].seats(1) == (pairs[0].b, pairs[0].a)
    assert pairs[0].match_id(1) == "p00000h1"
    assert [(p.a, p.b) for p in pairs[:6]] == [(p.a, p.b) for p in pairs[6:12]]  # round by round


def test_double_round_robin_and_gauntlet() -> None:
    assert len(schedule(3, "double_round_robin", 2, Deals.public(1))) == 3 * 2 * 2
    gauntlet = schedule(4, "gauntlet", 2, Deals.public(1))
    assert {(p.a, p.b) for p in gauntlet} == {(0, 1), (0, 2), (0, 3)} and len(gauntlet) == 6


def test_public_seeds_derive_from_the_tournament_seed_only() -> None:
    assert [p.seed for p in schedule(3, "round_robin", 2, Deals.public(5))] == [p.seed for p in schedule(3, "round_robin", 2, Deals.public(5))]
    assert schedule(3, "round_robin", 1, Deals.public(5))[0].seed != schedule(3, "round_robin", 1, Deals.public(6))[0].seed
    assert schedule(3, "round_robin", 1, Deals.public(5))[0].seed == derive_seed(5, "pair", 0)
    assert len({p.seed for p in schedule(6, "round_robin", 5, Deals.public(1))}) == 75


@pytest.mark.parametrize(("n", "pairs_per"), [(1, 1), (3, 0)])
def test_bad_schedules_are_value_errors(n: int, pairs_per: int) -> None:
    with pytest.raises(ValueError):
        schedule(n, "round_robin", pairs_per, Deals.public(1))
