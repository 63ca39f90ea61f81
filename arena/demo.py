"""A seeded match between two in-process random policies, for a first look at the engine."""

from __future__ import annotations

import random

from arena.engine import Hand, Match, Rules
from arena.engine.records import HandRecord
from arena.render import hand_lines


def random_policy_action(hand: Hand, rng: random.Random) -> str:
    """Uniform over the legal actions, declaring exactly at 66 or more (never falsely)."""
    legal = hand.legal_actions()
    seat = hand.to_move
    if "declare" in legal:
        if seat is not None and hand.total(seat) >= 66:
            return "declare"
        legal.remove("declare")
    return rng.choice(legal)


def play_demo(seed: int, rules: Rules) -> list[str]:
    """Play one match with two random policies; return it as text, hand by hand."""
    match = Match(rules, seed=seed)
    rngs = (random.Random(f"{seed}:policy:0"), random.Random(f"{seed}:policy:1"))
    lines = [f"Match seed {seed}, first to {rules.match_target} game points"]
    while not match.is_over:
        seat = match.hand.to_move
        assert seat is not None
        result = match.apply(random_policy_action(match.hand, rngs[seat]))
        if result is not None:
            first, *rest = hand_lines(HandRecord.of(match.records[-1], rules))
            lines.append(f"\nHand {len(match.results)}: {first}")
            lines.extend(rest)
            lines.append(f"  score {match.score[0]}-{match.score[1]}" + (f", carry {match.carry}" if match.carry else ""))
    lines.append(f"\nP{match.winner} wins the match {match.score[0]}-{match.score[1]}")
    return lines


__all__ = ["play_demo", "random_policy_action"]
