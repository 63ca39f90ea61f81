"""Engine speed: random legal hands through the public API, one core.

Prints hands/s, decisions/s and mean decisions per hand (median of several runs), and the
cost of ``copy()`` + ``legal_actions()`` that search bots pay. The random policy is uniform
over the legal actions but declares exactly when its total is 66 or more.

``--baseline`` also times, interleaved run by run with the engine, the inline random play of
``bench/proto_engine.py`` (a tight prototype that simplifies the rules), and prints the ratio
of the two decision rates: how close the public API comes to a hand-inlined engine.
Times are this process's CPU time (``time.process_time``), so that other load on a shared
machine slows the figures less.

    .venv/bin/python bench/engine.py [--hands 20000] [--runs 5] [--profile default] [--baseline]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from arena.engine import Hand, Rules, canonical_deck

sys.path.insert(0, str(Path(__file__).resolve().parent))
import proto_engine  # noqa: E402  (bench/proto_engine.py, the reference prototype)
from machine import calibration_us  # noqa: E402  (bench/machine.py)


def shuffled_decks(n_hands: int, seed: int) -> list[list[str]]:
    """``n_hands`` decks shuffled from one seeded stream (made before the clock starts)."""
    rng = random.Random(seed)
    decks = []
    for _ in range(n_hands):
        deck = canonical_deck()
        rng.shuffle(deck)
        decks.append(deck)
    return decks


def play_random_hands(decks: list[list[str]], rules: Rules, seed: int) -> int:
    """Deal and play every deck with the random policy; return the number of decisions.

    The per-hand seeded shuffle of ``Hand.deal_seeded`` is timed on its own by
    ``seeded_deal_cost``.
    """
    uniform = random.Random(seed).random
    decisions = 0
    for i, deck in enumerate(decks):
        hand = Hand.deal(deck, i & 1, rules)
        while not hand.is_over:
            legal = hand.legal_actions()
            if "declare" in legal:
                if hand.total(hand.to_move) >= 66:  # type: ignore[arg-type]
                    hand.apply("declare")
                    decisions += 1
                    continue
                legal.remove("declare")
            hand.apply(legal[int(uniform() * len(legal))])
            decisions += 1
    return decisions


def prototype_decisions(n_deals: int, seed: int) -> int:
    """Play ``n_deals`` random deals inline in the prototype; return its decision count."""
    rng = random.Random(seed)
    return sum(proto_engine.play_deal(rng)[2] for _ in range(n_deals))


def seeded_deal_cost(rules: Rules, n: int = 20_000) -> float:
    """Mean seconds for one ``Hand.deal_seeded`` (a fresh ``random.Random(seed)`` per hand)."""
    start = time.process_time()
    for i in range(n):
        Hand.deal_seeded(i, i & 1, rules)
    return (time.process_time() - start) / n


def copy_and_legal_cost(rules: Rules, samples: int = 200_000) -> float:
    """Mean seconds for one ``copy()`` + ``legal_actions()`` on mid-hand positions."""
    rng = random.Random(1)
    positions = []
    for i in range(200):
        hand = Hand.deal_seeded(i, 0, rules)
        for _ in range(rng.randrange(1, 8)):
            legal = [a for a in hand.legal_actions() if a != "declare"]
            if hand.is_over or not legal:
                break
            hand.apply(rng.choice(legal))
        if not hand.is_over:
            positions.append(hand)
    start = time.process_time()
    n = 0
    while n < samples:
        for hand in positions:
            hand.copy().legal_actions()
        n += len(positions)
    return (time.process_time() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", default="default")
    parser.add_argument("--baseline", action="store_true",
                        help="also time the inline prototype (bench/proto_engine.py) and print the ratio")
    args = parser.parse_args()
    rules = Rules.profile(args.profile)
    hand_rates, decision_rates, per_hand, proto_rates, ratios = [], [], [], [], []
    for run in range(args.runs):
        decks = shuffled_decks(args.hands, seed=run)
        start = time.process_time()
        decisions = play_random_hands(decks, rules, seed=run)
        elapsed = time.process_time() - start
        hand_rates.append(args.hands / elapsed)
        decision_rates.append(decisions / elapsed)
        per_hand.append(decisions / args.hands)
        if args.baseline:
            start = time.process_time()
            proto = prototype_decisions(args.hands, seed=run)
            proto_rates.append(proto / (time.process_time() - start))
            ratios.append(decision_rates[-1] / proto_rates[-1])
    cost = copy_and_legal_cost(rules)
    deal_cost = seeded_deal_cost(rules)
    print(f"profile {args.profile}: {args.runs} runs x {args.hands} hands (median)")
    print(f"hands/s              {statistics.median(hand_rates):10,.0f}   (target >= 25,000)")
    print(f"decisions/s          {statistics.median(decision_rates):10,.0f}   (target >= 400,000)")
    print(f"decisions per hand   {statistics.median(per_hand):10.2f}")
    print(f"copy()+legal_actions {cost * 1e6:10.2f} us")
    print(f"deal_seeded()        {deal_cost * 1e6:10.2f} us   (seeding random.Random dominates)")
    if args.baseline:
        print(f"prototype decisions/s {statistics.median(proto_rates):9,.0f}   (bench/proto_engine.py, inline)")
        print(f"engine / prototype   {statistics.median(ratios):10.2f}   (median of per-run ratios; gate >= 0.45)")
    print(f"calibration          {calibration_us():10.2f} us   (sum(range(1000)); ~9-10 us on a quiet core)")


if __name__ == "__main__":
    main()
