"""Schedule-order TrueSkill ratings (unit)."""

from __future__ import annotations

import random

import pytest

from results.ratings import Rating, RatingEnv, ScheduleRater, rate_in_schedule_order, stored_pair_results
from tests.tournament.stores import match_row

pytestmark = pytest.mark.unit


def test_closed_form_update_equals_trueskill_rate_1vs1() -> None:
    env = RatingEnv()
    rng = random.Random(4)
    for _ in range(300):
        a = Rating(rng.uniform(-5, 55), rng.uniform(0.3, 9))
        b = Rating(rng.uniform(-5, 55), rng.uniform(0.3, 9))
        for fast, slow in zip(env.rate(a, b), env.reference_rate(a, b)):
            assert fast.mu == pytest.approx(slow.mu, abs=1e-9) and fast.sigma == pytest.approx(slow.sigma, abs=1e-9)


def test_an_upset_beyond_floating_point_is_skipped_not_raised() -> None:
    env = RatingEnv()
    low, high = Rating(-300.0, 1.0), Rating(300.0, 1.0)
    assert env.rate(low, high) == (low, high)


def test_ratings_do_not_depend_on_completion_order() -> None:
    env = RatingEnv()
    rng = random.Random(7)
    results = [(i, [_pair(rng), _pair(rng)]) for i in range(40)]
    in_order = ScheduleRater(env, 3)
    snaps_in_order = [s for i, r in results for s in in_order.add(i, r)]
    shuffled = results[:]
    rng.shuffle(shuffled)
    out_of_order = ScheduleRater(env, 3)
    snaps_shuffled = [s for i, r in shuffled for s in out_of_order.add(i, r)]
    assert sorted(snaps_shuffled) == snaps_in_order
    assert out_of_order.ratings == in_order.ratings == rate_in_schedule_order(env, 3, shuffled)


def _pair(rng: random.Random) -> tuple[int, int] | None:
    a, b = rng.sample(range(3), 2)
    return None if rng.random() < 0.1 else (a, b)


def test_stored_rows_become_rating_input_per_pair_with_seats_mapped_to_entrants() -> None:
    rows = [
        match_row(0, 0, (2, 5), 0), match_row(0, 1, (5, 2), 0),               # each seat wins once: 2, then 5
        match_row(1, 0, (1, 3), 1), match_row(1, 1, (3, 1), None, void=True),  # seat 1 (entrant 3) wins; a void half
        match_row(3, 0, (4, 0), 1, void=True),                                # void even with a winner seat recorded
    ]
    assert stored_pair_results(rows) == {0: [(2, 5), (5, 2)], 1: [(3, 1), None], 3: [None]}
