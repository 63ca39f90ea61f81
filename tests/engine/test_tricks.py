"""The trick rules on bitmasks (``arena.engine.tricks``): who wins (R6.4), the strict follows
(R6.3) and what a strict follow reveals, checked against each other and against R6.4's text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.engine.cards import CARD_INDEX, CARD_SUIT, SUITS
from arena.engine.rules import Rules
from arena.engine.tricks import WINNING_FOLLOWS, revealed_by_follow, strict_follows

pytestmark = pytest.mark.property

VARIANTS = [Rules(must_head=head, must_trump_when_void=trump) for head in (True, False) for trump in (True, False)]


def wins(lead: str, follow: str, trump: str) -> bool:
    return bool(WINNING_FOLLOWS[SUITS.index(trump)][CARD_INDEX[lead]] >> CARD_INDEX[follow] & 1)


def test_who_wins_a_trick() -> None:
    assert wins("KH", "AH", "S") and not wins("AH", "KH", "S")  # the higher of the suit
    assert wins("AH", "9S", "S")  # a trump played by the follower
    assert not wins("9S", "AH", "S")  # a trump lead beats any non-trump
    assert not wins("9H", "AD", "S")  # neither followed nor trumped: the leader
    assert wins("QS", "TS", "S") and not wins("TS", "QS", "S")  # trumps by rank


@given(st.integers(min_value=1, max_value=2**24 - 1), st.integers(0, 23), st.integers(0, 3),
       st.sampled_from(range(len(VARIANTS))))
def test_a_strict_follow_is_legal_and_reveals_only_cards_not_held(hand: int, lead: int, trump: int,
                                                                   variant: int) -> None:
    rules = VARIANTS[variant]
    hand &= ~(1 << lead)
    if not hand:
        return
    legal = strict_follows(rules, hand, lead, trump)
    assert legal and legal & ~hand == 0
    for card in range(24):
        if legal >> card & 1:
            assert revealed_by_follow(rules, lead, card, trump) & hand == 0, (hand, lead, card)
    same = hand & sum(1 << c for c in range(24) if CARD_SUIT[c] == CARD_SUIT[lead])
    if rules.must_head and WINNING_FOLLOWS[trump][lead] & same:
        assert legal & WINNING_FOLLOWS[trump][lead] == legal  # must head when it can
