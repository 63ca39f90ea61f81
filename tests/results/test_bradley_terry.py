"""Bradley-Terry standings, bootstrap and pair statistics against independent methods (unit)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from results.bradley_terry import ELO_PER_NAT, bradley_terry, fit_strengths, percentile, tied_groups, to_elo, win_matrix
from results.pairgames import PairGames, pair_games
from results.pairstats import head_to_head, trinomial
from tests.tournament.stores import match_row

pytestmark = pytest.mark.unit


def simulate(true_elo: list[float], pairs_per_pairing: int, rng: random.Random) -> list[PairGames]:
    """A round robin of duplicate pairs whose matches follow the Bradley-Terry model."""
    games = []
    for _ in range(pairs_per_pairing):
        for a in range(len(true_elo)):
            for b in range(a + 1, len(true_elo)):
                p = 1.0 / (1.0 + 10 ** ((true_elo[b] - true_elo[a]) / 400.0))
                a_wins = sum(rng.random() < p for _ in range(2))
                games.append(PairGames(len(games), a, b, a_wins, 2 - a_wins))
    return games


def textbook_mm(wins: list[list[float]]) -> list[float]:
    """Hunter's (2004) MM iteration for Bradley-Terry, with each bot's virtual win and loss
    against a fixed opponent of strength 1: gamma_i <- W_i / sum_j n_ij / (gamma_i + gamma_j)."""
    n = len(wins)
    gamma = [1.0] * n
    for _ in range(200_000):
        new = []
        for i in range(n):
            won = sum(wins[i]) + 1.0
            denominator = 2.0 / (gamma[i] + 1.0) + sum(
                (wins[i][j] + wins[j][i]) / (gamma[i] + gamma[j]) for j in range(n) if j != i)
            new.append(won / denominator)
        done = max(abs(math.log(x / y)) for x, y in zip(new, gamma)) < 1e-14
        gamma = new
        if done:
            break
    elo = [math.log(g) * 400.0 / math.log(10.0) for g in gamma]
    mean = sum(elo) / n
    return [e - mean for e in elo]


@pytest.mark.parametrize("case", range(4))
def test_the_fit_equals_a_textbook_mm_iteration_to_1e6_elo(case: int) -> None:
    rng = random.Random(case)
    n = 3 + case
    games = simulate([rng.gauss(0, 200) for _ in range(n)], 2 + 3 * case, rng)
    games.append(PairGames(len(games), 0, n - 1, 2, 0))  # bot 0 is likely unbeaten in the small cases
    ours = to_elo(fit_strengths(win_matrix(games, n)))
    theirs = textbook_mm(win_matrix(games, n).tolist())
    assert np.abs(ours - np.array(theirs)).max() < 1e-6


def test_unbeaten_and_winless_bots_stay_finite_and_the_mean_is_zero() -> None:
    games = [PairGames(i, 0, 1, 2, 0) for i in range(20)] + [PairGames(20 + i, 1, 2, 2, 0) for i in range(20)]
    elo = to_elo(fit_strengths(win_matrix(games, 3)))
    assert np.isfinite(elo).all() and abs(elo.sum()) < 1e-9 and elo[0] > elo[1] > elo[2]
    no_games = to_elo(fit_strengths(np.zeros((3, 3))))
    assert np.allclose(no_games, 0.0)
    # one virtual win and loss vs Elo 0, and 2-0 against each other: the MAP solves
    # 2 - 2 p(d) + 1 - 2 s(r0) = 0 in closed form only numerically; check the gradient instead
    r = fit_strengths(win_matrix([PairGames(0, 0, 1, 2, 0)], 2))
    p = 1.0 / (1.0 + np.exp(r[1] - r[0]))
    assert abs(2.0 - 2.0 * p + 1.0 - 2.0 / (1.0 + np.exp(-r[0]))) < 1e-10
    assert ELO_PER_NAT == pytest.approx(400.0 / math.log(10.0))


def test_the_fit_does_not_depend_on_the_order_of_the_games() -> None:
    rng = random.Random(5)
    games = simulate([100.0, 0.0, -100.0, 20.0], 10, rng)
    shuffled = games[:]
    rng.shuffle(shuffled)
    one, two = bradley_terry(games, 4, replicates=50, seed=3), bradley_terry(shuffled, 4, replicates=50, seed=3)
    assert [s.elo for s in one.standings] == pytest.approx([s.elo for s in two.standings], abs=1e-9)
    assert one == bradley_terry(games, 4, replicates=50, seed=3)  # seeded: the same bootstrap
    assert one.standings != bradley_terry(games, 4, replicates=50, seed=4).standings


def test_bootstrap_figures_are_consistent() -> None:
    fit = bradley_terry(simulate([300.0, 0.0, 0.0, -300.0], 20, random.Random(2)), 4, replicates=400, seed=1)
    ranks = [s.rank_ci95 for s in fit.standings]
    assert ranks[0] == (1, 1) and ranks[3] == (4, 4) and fit.standings[0].p_top1 == 1.0
    assert sum(s.p_top1 for s in fit.standings) == pytest.approx(1.0)
    assert sum(fit.p_top_k) == pytest.approx(fit.top_k)  # ties between samples are improbable
    for i in range(4):
        s = fit.standings[i]
        assert s.elo_ci95[0] <= s.elo <= s.elo_ci95[1]
        for j in range(4):
            if i != j:
                assert fit.p_better[i][j] + fit.p_better[j][i] == pytest.approx(1.0)  # type: ignore[operator]
    assert fit.p_better[0][3] == 1.0 and fit.tied_groups == [sorted([1, 2], key=lambda e: -fit.standings[e].elo)]


def test_the_bootstrap_95_interval_covers_the_true_elo_about_95_percent_of_the_time() -> None:
    """Coverage by simulation: 300 seeded tournaments of the true model, 200 replicates each."""
    true_elo = [-120.0, -40.0, 40.0, 120.0]
    rng = random.Random(11)
    covered = trials = 0
    for run in range(300):
        fit = bradley_terry(simulate(true_elo, 25, rng), 4, replicates=200, seed=run)
        for bot, standing in enumerate(fit.standings):
            trials += 1
            covered += standing.elo_ci95[0] <= true_elo[bot] <= standing.elo_ci95[1]
    assert 0.90 <= covered / trials <= 0.985, covered / trials  # 0.92 measured (MAP shrinkage, percentile bootstrap)


def test_tied_groups_join_overlapping_rank_intervals() -> None:
    elo = [50.0, 40.0, 0.0, -10.0, -80.0]
    assert tied_groups(elo, [(1, 2), (1, 3), (3, 4), (4, 4), (5, 5)]) == [[0, 1, 2, 3]]
    assert tied_groups(elo, [(1, 1), (2, 3), (2, 3), (4, 5), (4, 5)]) == [[1, 2], [3, 4]]
    assert tied_groups(elo, [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]) == []


def test_pair_games_group_stored_rows_and_skip_void_halves() -> None:
    rows = [match_row(0, 0, (2, 0), 0), match_row(0, 1, (0, 2), 1), match_row(1, 1, (1, 2), 0),
            match_row(1, 0, (2, 1), None, void=True)]
    assert pair_games(rows) == [PairGames(0, 2, 0, 2, 0), PairGames(1, 2, 1, 0, 1)]
    assert head_to_head(pair_games(rows)) == {(2, 0): trinomial(1, 0, 0), (0, 2): trinomial(0, 0, 1)}


def test_trinomial_pair_statistics() -> None:
    stats = trinomial(3, 2, 1)
    score = (3 + 0.5 * 2) / 6
    se = math.sqrt((3 * (1 - score) ** 2 + 2 * (0.5 - score) ** 2 + 1 * score ** 2) / 6 / 6)
    assert stats.score == pytest.approx(score) and stats.pairs == 6
    assert stats.elo == pytest.approx(400 * math.log10(score / (1 - score)))
    lo, hi = stats.elo_ci95
    assert lo == pytest.approx(400 * math.log10((score - 1.96 * se) / (1 - score + 1.96 * se)), abs=0.05)
    assert hi == pytest.approx(400 * math.log10((score + 1.96 * se) / (1 - score - 1.96 * se)), abs=0.05)
    assert stats.los == pytest.approx(0.5 * (1 + math.erf((score - 0.5) / se / math.sqrt(2))))
    assert trinomial(0, 5, 0).los == 0.5 and trinomial(0, 5, 0).elo == 0.0
    sweep = trinomial(4, 0, 0)
    assert sweep.elo is None and sweep.elo_ci95 == (None, None) and sweep.score_ci95 == (1.0, 1.0) and sweep.los == 1.0
    assert trinomial(0, 0, 0).score is None and trinomial(0, 0, 0).los is None


@pytest.mark.parametrize("seed", range(40))
def test_percentile_of_sorted_columns_is_numpys_to_the_last_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 1500)), int(rng.integers(1, 6))
    samples = rng.normal(scale=float(rng.choice([1.0, 300.0, 1e6])), size=(n, k))
    ranks = rng.integers(1, 8, size=(n, k))
    for q in (2.5, 97.5, 0.0, 50.0, 100.0, float(rng.uniform(0, 100))):
        assert np.array_equal(percentile(np.sort(samples, axis=0), q), np.percentile(samples, q, axis=0))
        for method in ("lower", "higher"):
            assert np.array_equal(percentile(np.sort(ranks, axis=0), q, method),
                                  np.percentile(ranks, q, axis=0, method=method))
