"""Shared helpers for engine property tests: random legal play driven by hypothesis."""

from __future__ import annotations

import random
from collections.abc import Iterator

from arena.demo import random_policy_action as pick
from arena.engine import Hand

PROFILES = ("default", "pagat", "santase")


def play_out(hand: Hand, rng: random.Random) -> Iterator[str]:
    """Play ``hand`` to the end with ``pick``, yielding each action after it is applied."""
    while not hand.is_over:
        action = pick(hand, rng)
        hand.apply(action)
        yield action
