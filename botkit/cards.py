"""Card bitmasks over the engine's card indices (``suit * 6 + rank``; rank 0 = ace): the
engine's tables and helpers for the policies."""

from __future__ import annotations

from arena.engine.cards import (
    ACE, ALL, CARD_INDEX, CARD_NAMES, CARD_POINTS, CARD_SUIT, KING, NINE, QUEEN, SUIT_MASK, SUITS, TEN, cards_of,
)

__all__ = [
    "ACE", "ALL", "CARD_INDEX", "CARD_NAMES", "CARD_POINTS", "CARD_SUIT", "SUITS", "SUIT_MASK",
    "TEN", "KING", "QUEEN", "NINE", "bit", "cards_of", "mask_of", "names_of", "points_of",
    "highest", "lowest", "count",
]

_POINTS_BY_BIT = CARD_POINTS


def bit(c: int) -> int:
    """The mask of one card."""
    return 1 << c


def mask_of(names: list[str] | tuple[str, ...]) -> int:
    """The mask of some card names."""
    m = 0
    for name in names:
        m |= 1 << CARD_INDEX[name]
    return m


def names_of(m: int) -> list[str]:
    """The card names in ``m``, canonical order."""
    return [CARD_NAMES[c] for c in cards_of(m)]


def points_of(m: int) -> int:
    """The card points in ``m``."""
    total = 0
    while m:
        low = m & -m
        total += _POINTS_BY_BIT[low.bit_length() - 1]
        m ^= low
    return total


def highest(m: int) -> int:
    """The highest card of a one-suit mask (lowest index), or -1 if empty."""
    return (m & -m).bit_length() - 1 if m else -1


def lowest(m: int) -> int:
    """The lowest card of a one-suit mask (highest index), or -1 if empty."""
    return m.bit_length() - 1 if m else -1


def count(m: int) -> int:
    """How many cards are in ``m``."""
    return m.bit_count()
