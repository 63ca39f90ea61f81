"""The normalised-Elo GSPRT on pair outcomes against published worked numbers (unit)."""

from __future__ import annotations

import math
import random

import pytest

from results.sprt import Bounds, llr, pair_pdf, trinomial_llr

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("pentanomial", "elo0", "elo1", "printed"), [
    # fastchess's report of a 20-game run, quoted in the SeaJay chess engine's project notes
    # (namebrandon/seajay-chess): "Ptnml(0-2): [0, 0, 1, 8, 1] ... LLR: 1.24 (42.1%) (-2.94, 2.94) [0.00, 50.00]"
    ([0, 0, 1, 8, 1], 0.0, 50.0, 1.24),
    # fastchess's final report of a 6804-game run in the Zeno chess engine's results notes
    # (Toudonou/zeno): "Ptnml(0-2): [352, 579, 1264, 743, 464] ... LLR: 4.60 (100.0%) (-4.60, 4.60) [9.00, 16.00]"
    ([352, 579, 1264, 743, 464], 9.0, 16.0, 4.60),
])
def test_the_llr_reproduces_fastchess_printed_numbers(pentanomial: list[int], elo0: float, elo1: float,
                                                      printed: float) -> None:
    assert round(llr(pentanomial, elo0, elo1), 2) == printed


def test_bounds_are_the_wald_bounds() -> None:
    bounds = Bounds.of(0.05, 0.05)
    assert bounds.lower == pytest.approx(math.log(0.05 / 0.95)) == pytest.approx(-2.944, abs=1e-3)
    assert bounds.upper == pytest.approx(math.log(0.95 / 0.05))
    assert (bounds.decide(3.0), bounds.decide(-3.0), bounds.decide(0.0)) == ("H1", "H0", None)
    assert Bounds.of(0.05, 0.1).lower == pytest.approx(math.log(0.1 / 0.95))
    with pytest.raises(ValueError, match="between 0 and 1"):
        Bounds.of(0.0, 0.05)


def test_the_trinomial_is_the_pentanomial_without_draws() -> None:
    """Pairs lost 0-2, split 1-1, won 2-0 are the pentanomial's LL, WL and WW; only the
    regularisation of the two empty draw bins differs."""
    for won, split, lost in [(30, 50, 20), (5, 40, 8), (60, 30, 10)]:
        three = trinomial_llr(won, split, lost, 0.0, 5.0)
        five = llr([lost, 0, split, 0, won], 0.0, 5.0)
        assert three == pytest.approx(five, rel=0.02, abs=0.02)


def test_the_llr_drifts_the_right_way_and_is_zero_without_data() -> None:
    assert trinomial_llr(0, 0, 0, 0.0, 5.0) == 0.0
    assert trinomial_llr(160, 200, 40, 0.0, 5.0) > 2.95  # clearly better
    assert trinomial_llr(40, 200, 160, 0.0, 5.0) < -2.95  # clearly worse
    assert trinomial_llr(20, 60, 20, 0.0, 5.0) < 0  # equal: evidence for H0 over H1
    rng = random.Random(3)
    for _ in range(20):  # symmetric hypotheses around the truth: the LLR's sign is the score's side
        won, lost = rng.randrange(1, 50), rng.randrange(1, 50)
        value = trinomial_llr(won, 30, lost, -5.0, 5.0)
        assert (value > 0) == (won > lost) or won == lost


def test_bad_counts_are_value_errors() -> None:
    with pytest.raises(ValueError, match="3 or 5 non-negative"):
        pair_pdf([1, 2])
    with pytest.raises(ValueError, match="3 or 5 non-negative"):
        pair_pdf([1, -2, 3])


def test_the_tracker_counts_pairs_in_schedule_order_only() -> None:
    from results.pairgames import PairGames
    from results.sprt import SprtTracker

    tracker = SprtTracker(elo0=0.0, elo1=50.0, alpha=0.05, beta=0.05, max_pairs=100)
    games = [PairGames(0, 0, 1, 2, 0), PairGames(2, 0, 1, 2, 0)]  # pair 1 is not stored yet
    assert tracker.update(games).pairs == 1
    games.insert(1, PairGames(1, 0, 1, 1, 0))  # a void half: played, not counted
    status = tracker.update(games)
    assert (status.pairs, status.won, status.split, status.lost) == (3, 2, 0, 0)
    assert status.llr == pytest.approx(trinomial_llr(2, 0, 0, 0.0, 50.0)) and status.result is None
    more = games + [PairGames(i, 0, 1, 2, 0) for i in range(3, 60)]
    final = tracker.update(more)
    assert final.result == "H1" and final.llr >= final.upper and final.pairs < 60
    assert tracker.update(more + [PairGames(60, 0, 1, 0, 2)]) == final  # decided: later pairs change nothing
    assert final.to_dict()["result"] == "H1" and set(final.to_dict()) == {
        "llr", "lower", "upper", "result", "pairs", "elo", "elo_ci95", "los"}


def test_max_pairs_ends_an_undecided_test() -> None:
    from results.pairgames import PairGames
    from results.sprt import SprtTracker

    tracker = SprtTracker(elo0=0.0, elo1=5.0, alpha=0.05, beta=0.05, max_pairs=4)
    status = tracker.update([PairGames(i, 0, 1, 1, 1) for i in range(6)])
    assert (status.result, status.pairs) == ("max-pairs", 4)
    with pytest.raises(ValueError, match="elo0 must be below elo1"):
        SprtTracker(elo0=5.0, elo1=0.0, alpha=0.05, beta=0.05, max_pairs=4)
    with pytest.raises(ValueError, match="alpha and beta must be between 0 and 1"):
        SprtTracker(elo0=0.0, elo1=5.0, alpha=1.5, beta=0.05, max_pairs=4)
