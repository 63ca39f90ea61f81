"""Shared helpers for engine property tests: random legal play driven by hypothesis."""

from __future__ import annotations

import random
from collections.abc import Iterator

from arena.engine import Hand

PROFILES = ("default", "pagat", "santase")


def pick(hand: Hand, rng: random.Random) -> str:
    """A random legal action that declares exactly at 66 or more (the benchmark policy)."""
    legal = hand.legal_actions()
    if "declare" in legal:
        if hand.total(hand.to_move) >= 66:  # type: ignore[arg-type]
            return "declare"
        legal.remove("declare")
    return rng.choice(legal)


def play_out(hand: Hand, rng: random.Random) -> Iterator[str]:
    """Play ``hand`` to the end with ``pick``, yielding each action after it is applied."""
    while not hand.is_over:
        action = pick(hand, rng)
        hand.apply(action)
        yield action
