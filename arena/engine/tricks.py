"""Who wins a trick (docs/rules.md R6.4) and what a follower may play once the stock is
closed or exhausted (R6.3), on card ints and bitmasks.

Each rule is written once, here: the rules core (``Core``) lists its follows and resolves
its tricks with these, and so do the bots' search and card counting, which keep state of
their own (``botkit/endgame.py``, ``botkit/knowledge.py``, ``botkit/policies.py``).
"""

from __future__ import annotations

from .cards import BEATS_IN_SUIT, CARD_SUIT, SUIT_MASK
from .rules import Rules

WINNING_FOLLOWS: tuple[tuple[int, ...], ...] = tuple(
    tuple(BEATS_IN_SUIT[lead] | (SUIT_MASK[trump] if CARD_SUIT[lead] != trump else 0) for lead in range(24))
    for trump in range(4))
"""``WINNING_FOLLOWS[trump][lead]``: the follows that win a trick led by ``lead`` (R6.4): a
higher card of its suit, or any trump when ``lead`` is not one."""


def strict_follows(rules: Rules, hand: int, lead: int, trump: int) -> int:
    """The legal follows to ``lead`` from ``hand`` (a card bitmask) once the stock is closed or
    exhausted (R6.3): a higher card of the suit, else the suit, else a trump, else anything
    (``must_head`` and ``must_trump_when_void`` switch the first and third off)."""
    same = hand & SUIT_MASK[CARD_SUIT[lead]]
    if same:
        return (same & BEATS_IN_SUIT[lead] or same) if rules.must_head else same
    if rules.must_trump_when_void:
        return hand & SUIT_MASK[trump] or hand
    return hand


def revealed_by_follow(rules: Rules, lead: int, card: int, trump: int) -> int:
    """The cards a strict follow (R6.3) of ``card`` to ``lead`` shows the follower does not
    hold: the suit's higher cards when it followed low, the suit when it did not follow, and
    the trumps too when it neither followed nor trumped."""
    suit = CARD_SUIT[lead]
    if CARD_SUIT[card] == suit:
        return BEATS_IN_SUIT[lead] if rules.must_head and card > lead else 0
    if CARD_SUIT[card] == trump or not rules.must_trump_when_void:
        return SUIT_MASK[suit]
    return SUIT_MASK[suit] | SUIT_MASK[trump]


__all__ = ["WINNING_FOLLOWS", "revealed_by_follow", "strict_follows"]
