"""Rating speed: 100,000 match results rated in schedule order (TrueSkill, target < 20 s) and
in one Bradley-Terry batch fit with 1000 bootstrap replicates (target < 10 s on 2 cores).

Synthetic results among 50 bots with hidden strengths; also checks the closed-form update
against ``trueskill.rate_1vs1`` on a sample and prints the largest difference.

    .venv/bin/python bench/ratings.py [--matches 100000] [--bots 50] [--bootstrap 1000]
"""

from __future__ import annotations

import argparse
import random
import time

from results.bradley_terry import bradley_terry
from results.pairgames import pair_games
from results.ratings import Rating, RatingEnv, rate_in_schedule_order
from results.rows import MatchRow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(1)
    strength = [rng.gauss(0, 1) for _ in range(args.bots)]
    pairs, rows = [], []  # schedule-order results for TrueSkill, stored-row form for Bradley-Terry
    for index in range(args.matches // 2):
        a, b = rng.sample(range(args.bots), 2)
        halves = []
        for half in range(2):
            a_wins = rng.random() < 1 / (1 + 10 ** (strength[b] - strength[a]))
            halves.append((a, b) if a_wins else (b, a))
            seats = (a, b) if half == 0 else (b, a)
            rows.append(MatchRow(id=len(rows), pair_index=index, half=half, match_id="", seed=0, seat0=seats[0],
                                 seat1=seats[1], winner_seat=seats.index(halves[-1][0]), score0=0, score1=0,
                                 forfeit=False, void=False, hands=0, interrupted_json=None))
        pairs.append((index, halves))
    env = RatingEnv()
    start = time.perf_counter()
    ratings = rate_in_schedule_order(env, args.bots, pairs)
    elapsed = time.perf_counter() - start
    order = sorted(range(args.bots), key=lambda e: -ratings[e].conservative)
    truth = sorted(range(args.bots), key=lambda e: -strength[e])
    agree = sum(1 for e in range(args.bots) if abs(order.index(e) - truth.index(e)) <= 3) / args.bots
    worst = 0.0
    for _ in range(1000):
        x = Rating(rng.uniform(0, 50), rng.uniform(0.5, 8))
        y = Rating(rng.uniform(0, 50), rng.uniform(0.5, 8))
        for fast, slow in zip(env.rate(x, y), env.reference_rate(x, y)):
            worst = max(worst, abs(fast.mu - slow.mu), abs(fast.sigma - slow.sigma))
    print(f"{args.matches:,} results rated in {elapsed:.2f} s (target < 20 s); "
          f"{args.matches / elapsed:,.0f} updates/s")
    print(f"rank within 3 of the hidden order for {agree:.0%} of bots; "
          f"max |closed form - trueskill.rate_1vs1| = {worst:.1e}")
    start = time.perf_counter()
    fit = bradley_terry(pair_games(rows), args.bots, replicates=args.bootstrap, seed=1)
    elapsed = time.perf_counter() - start
    bt_order = sorted(range(args.bots), key=lambda e: -fit.standings[e].elo)
    bt_agree = sum(1 for e in range(args.bots) if abs(bt_order.index(e) - truth.index(e)) <= 3) / args.bots
    width = sum(s.elo_ci95[1] - s.elo_ci95[0] for s in fit.standings) / args.bots
    print(f"{args.matches:,} results: Bradley-Terry fit with {args.bootstrap} bootstrap replicates in "
          f"{elapsed:.2f} s (target < 10 s); rank within 3 of the hidden order for {bt_agree:.0%} of bots; "
          f"mean Elo 95% interval width {width:.0f}")


if __name__ == "__main__":
    main()
