"""Card tables: names, suits, ranks and points, by card index.

A card is an int 0..23 inside the engine: ``suit * 6 + rank`` with suits C, D, H, S and
ranks A, T, K, Q, J, 9 (high to low). Ascending index is therefore the canonical order of
docs/architecture.md#engine-api, and within a suit a lower index is a higher card. The public API speaks
the two-letter names (``"AH"``, ``"TC"``, ``"9S"``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from operator import itemgetter

SUITS = "CDHS"
RANKS = "ATKQJ9"
RANK_POINTS = (11, 10, 4, 3, 2, 0)

CARD_NAMES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
CARD_INDEX: dict[str, int] = {name: i for i, name in enumerate(CARD_NAMES)}
CARD_SUIT: tuple[int, ...] = tuple(i // 6 for i in range(24))
CARD_POINTS: tuple[int, ...] = tuple(RANK_POINTS[i % 6] for i in range(24))

ACE, TEN, KING, QUEEN, JACK, NINE = range(6)

ALL = (1 << 24) - 1
"""The mask of every card: card ``c`` is bit ``1 << c`` of a card bitmask."""
SUIT_MASK: tuple[int, ...] = tuple(0x3F << (6 * s) for s in range(4))
CARD_BIT: tuple[int, ...] = tuple(1 << c for c in range(24))
"""``1 << c`` by card: a table lookup is cheaper than a shift in the hot paths."""
BEATS_IN_SUIT: tuple[int, ...] = tuple(SUIT_MASK[c // 6] & ((1 << c) - 1) for c in range(24))
"""The cards of card ``c``'s suit that beat it (the higher ranks: lower indices)."""


def _set_bits(offset: int) -> tuple[list[int], ...]:
    """For each 12-bit mask, its set bits plus ``offset``, ascending: the mask's lowest bit, then
    the list of the mask without it (a fifth of the time of testing every bit of every mask)."""
    table: list[list[int]] = [[]]
    for m in range(1, 4096):
        table.append([(m & -m).bit_length() - 1 + offset, *table[m & (m - 1)]])
    return tuple(table)


LOW_CARDS: tuple[list[int], ...] = _set_bits(0)
"""The cards C and D of a mask's low 12 bits, ascending (``cards_of`` joins the two halves)."""
HIGH_CARDS: tuple[list[int], ...] = _set_bits(12)
"""The cards H and S of a mask's high 12 bits (``mask >> 12``), ascending."""


LOW_NAMES: tuple[list[str], ...] = tuple([CARD_NAMES[c] for c in cards] for cards in LOW_CARDS)
"""The names of ``LOW_CARDS``' cards (``names_of`` joins the two halves)."""
HIGH_NAMES: tuple[list[str], ...] = tuple([CARD_NAMES[c] for c in cards] for cards in HIGH_CARDS)
"""The names of ``HIGH_CARDS``' cards."""


def names_of(mask: int) -> list[str]:
    """The names of a bitmask's cards, ascending (the canonical order), as a new list."""
    return LOW_NAMES[mask & 4095] + HIGH_NAMES[mask >> 12]


def cards_of(mask: int) -> list[int]:
    """The cards of a bitmask, ascending (the canonical order), as a new list."""
    return LOW_CARDS[mask & 4095] + HIGH_CARDS[mask >> 12]


def card(suit: int, rank: int) -> int:
    """The index of the card of ``suit`` (0..3) and ``rank`` (0 = ace .. 5 = nine)."""
    return suit * 6 + rank


def canonical_deck() -> list[str]:
    """The 24 card names in canonical order: ``AC`` first, ``9S`` last."""
    return list(CARD_NAMES)


def parse_deck(deck: object) -> tuple[int, ...]:
    """Check a deck of 24 distinct card names and return their indices.

    Raises ValueError naming the problem (wrong length, unknown card, duplicate).
    """
    indices: tuple[int, ...] = ()
    try:
        if isinstance(deck, (list, tuple)) and len(deck) == 24:
            indices = itemgetter(*deck)(CARD_INDEX)  # the 24 look-ups in one call
        elif isinstance(deck, Iterable):
            indices = tuple(CARD_INDEX[name] for name in deck)
    except (KeyError, TypeError):
        pass
    if len(indices) == 24 and len(set(indices)) == 24:
        return indices
    if not isinstance(deck, (list, tuple)):
        raise ValueError(f"deck must be a list of 24 card names, not {type(deck).__name__}")
    if len(deck) != 24:
        raise ValueError(f"deck must hold 24 cards, got {len(deck)}")
    unknown = [name for name in deck if not isinstance(name, str) or name not in CARD_INDEX]
    if unknown:
        raise ValueError(f"unknown card {unknown[0]!r} in deck")
    dupes = sorted(name for name, n in Counter(deck).items() if n > 1)
    raise ValueError(f"duplicate cards in deck: {', '.join(dupes)}")
