"""Fuzz the engine: random legal play under every named profile, R16 checked after every action.

The property tests run a small sample in CI; this runs the large one (docs/rules.md#worked-examples,
example 50: at least 10^5 hands per profile). Prints hands, actions and invariant failures.

    .venv/bin/python bench/fuzz.py [--hands 100000] [--seed 1] [--profiles default pagat santase]
"""

from __future__ import annotations

import argparse
import random
import time

from arena.demo import random_policy_action
from arena.engine import Hand, Rules
from arena.engine.invariants import InvariantError, check_end, check_step


def fuzz(profile: str, hands: int, seed: int) -> tuple[int, list[str]]:
    """Play ``hands`` random hands; return (actions applied, failures)."""
    rules = Rules.profile(profile)
    rng = random.Random(f"{seed}:{profile}")
    actions = 0
    failures: list[str] = []
    for i in range(hands):
        hand = Hand.deal_seeded(f"{seed}:{profile}:{i}", i & 1, rules)
        try:
            check_step(hand)
            while not hand.is_over:
                hand.apply(random_policy_action(hand, rng))
                actions += 1
                check_step(hand)
            check_end(hand)
            if Hand.replay(hand.record()).result != hand.result:
                raise InvariantError(f"replay differs: {hand.record()}")
        except InvariantError as exc:
            failures.append(str(exc))
    return actions, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profiles", nargs="+", default=["default", "pagat", "santase"])
    args = parser.parse_args()
    total_failures = 0
    for profile in args.profiles:
        start = time.perf_counter()
        actions, failures = fuzz(profile, args.hands, args.seed)
        elapsed = time.perf_counter() - start
        total_failures += len(failures)
        print(f"{profile:8s} {args.hands:,} hands, {actions:,} actions, {len(failures)} invariant failures "
              f"({elapsed:.0f} s)")
        for failure in failures[:5]:
            print("   ", failure[:300])
    raise SystemExit(1 if total_failures else 0)


if __name__ == "__main__":
    main()
