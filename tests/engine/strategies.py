"""Shared helpers for engine property tests: random legal play driven by hypothesis."""

from __future__ import annotations

import random
from collections.abc import Iterator

from arena.demo import random_policy_action as pick
from arena.engine import Hand, Rules

PROFILES = ("default", "pagat", "santase")
RULE_VARIANTS = [  # the named profiles and two that switch every other option
    Rules(),
    Rules.profile("pagat"),
    Rules.profile("santase"),
    Rules(must_head=False, must_trump_when_void=False, allow_close_before_draw=False,
          failed_close_points="2or3_at_end", schneider_counts_marriages=False, reject_false_declaration=True),
    Rules(marriages_in_phase_b=True, allow_close_before_final_draw=True, marriage_on_first_lead=False,
          failed_close_points="flat2", last_trick_bonus=0),
]


def play_out(hand: Hand, rng: random.Random) -> Iterator[str]:
    """Play ``hand`` to the end with ``pick``, yielding each action after it is applied."""
    while not hand.is_over:
        action = pick(hand, rng)
        hand.apply(action)
        yield action
