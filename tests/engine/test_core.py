"""The fast interface of the rules core (``arena.engine.core``) agrees with the checked layer.

A search state (``Core`` without a log, int actions) and a ``Hand`` (strings, views) are driven
through the same random play under every rule variant: at every step the legal actions,
seat to move, totals, cards and result must agree, and a core rebuilt from any view (as
search builds its worlds) must agree with ``Hand.from_view`` of the same guesses.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import Hand, Rules
from arena.engine.cards import CARD_INDEX, cards_of
from arena.engine.core import ACTION_INDEX, ACTION_NAMES, DECLARE, Core

from .strategies import RULE_VARIANTS

pytestmark = pytest.mark.property

seeds = st.integers(min_value=0, max_value=2**32)
variants = st.sampled_from(range(len(RULE_VARIANTS)))


def assert_same(hand: Hand, core: Core) -> None:
    """The checked layer and the core describe the same state."""
    assert [ACTION_NAMES[a] for a in core.legal] == hand.legal_actions()
    assert sum(1 << a for a in core.legal) == core.legal_mask
    assert [core.total(0), core.total(1)] == [hand.total(0), hand.total(1)]
    if hand.is_over:
        assert hand.result is not None and core.result is not None
        assert hand.result == core.hand_result()
        assert core.value(0) == -core.value(1)
    else:
        assert core.result is None and core.to_move == hand.to_move
    for seat in (0, 1):
        view = hand.view(seat)
        assert cards_of(core.hands[seat]) == [CARD_INDEX[c] for c in view["hand"]]
        assert cards_of(core.shown[1 - seat] & core.hands[1 - seat]) == [CARD_INDEX[c] for c in view["opponent_known"]]


def choose(rng: random.Random, legal: list[str]) -> str:
    """Random play that mostly declares only when it is correct, so hands run long."""
    if "declare" in legal and rng.random() < 0.9:
        legal = [a for a in legal if a != "declare"] or legal
    return rng.choice(legal)


def hidden(hand: Hand, seat: int) -> tuple[list[str], list[str]]:
    """The true opponent cards and hidden stock (draw order) that ``seat`` cannot see."""
    view = hand.view(seat)
    drawn = sum(1 for e in view["events"] if e["type"] == "draw")
    stock = list(hand.deck[13 + drawn:]) if drawn < 12 and not view["closed"] else []
    return hand.view(1 - seat)["hand"], stock


@settings(max_examples=120, deadline=None)
@given(seed=seeds, variant=variants, policy_seed=seeds)
def test_a_search_state_plays_like_the_checked_hand(seed: int, variant: int, policy_seed: int) -> None:
    rules = RULE_VARIANTS[variant]
    rng = random.Random(policy_seed)
    hand = Hand.deal_seeded(seed, dealer=seed % 2, rules=rules)
    core = Core.deal([CARD_INDEX[c] for c in hand.deck], seed % 2, rules)
    assert core.log is None
    assert_same(hand, core)
    while not hand.is_over:
        action = choose(rng, hand.legal_actions())
        before = core.copy()
        hand.apply(action)
        core.apply(ACTION_INDEX[action])
        assert_same(hand, core)
        assert before.legal_mask != core.legal_mask or before.hands != core.hands  # the copy stayed put


@settings(max_examples=60, deadline=None)
@given(seed=seeds, variant=st.sampled_from(range(3)), stop=st.integers(min_value=0, max_value=30))
def test_a_core_from_a_view_plays_like_hand_from_view(seed: int, variant: int, stop: int) -> None:
    rules = RULE_VARIANTS[variant]
    rng = random.Random(seed)
    hand = Hand.deal_seeded(seed, dealer=seed % 2, rules=rules)
    for _ in range(stop):
        if hand.is_over:
            break
        hand.apply(choose(rng, hand.legal_actions()))
    for seat in (0, 1):
        view = hand.view(seat)
        opp, stock = hidden(hand, seat)
        world = Hand.from_view(view, opp, stock, rules)
        core = Core.from_view(view, [CARD_INDEX[c] for c in opp], [CARD_INDEX[c] for c in stock], rules)
        assert world.view(seat) == view
        assert_same(world, core)
        while not world.is_over:
            action = choose(rng, world.legal_actions())
            world.apply(action)
            core.apply(ACTION_INDEX[action])
            assert_same(world, core)


def test_action_ints_and_strings_are_one_table() -> None:
    assert len(ACTION_NAMES) == 33 and all(ACTION_INDEX[name] == a for a, name in enumerate(ACTION_NAMES))
    assert ACTION_NAMES[CARD_INDEX["AH"]] == "play AH" and ACTION_NAMES[DECLARE] == "declare"


def test_a_copy_is_independent_of_its_original() -> None:
    core = Core.deal([CARD_INDEX[c] for c in Hand.deal_seeded(3).deck], 0, Rules())
    child = core.copy()
    child.apply(child.legal[-1])
    assert child.hands != core.hands and core.legal != child.legal
    assert Core.deal([CARD_INDEX[c] for c in Hand.deal_seeded(3).deck], 0, Rules()).hands == core.hands


@given(st.integers(min_value=0, max_value=(1 << 24) - 1))
def test_cards_of_lists_every_set_bit_once_ascending(mask: int) -> None:
    assert cards_of(mask) == [c for c in range(24) if mask >> c & 1]
