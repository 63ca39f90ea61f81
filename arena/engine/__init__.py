"""The rules of Sixty-Six: pure Python, no I/O, no third-party imports.

Public API (docs/architecture.md#engine-api)::

    from arena.engine import Rules, Hand, Match, HandResult, IllegalAction
"""

from .cards import CARD_NAMES, SUITS, canonical_deck
from .errors import IllegalAction, MalformedAction
from .core import Phase
from .hand import GAME_POINTS_RANGE, MAX_DECISIONS_PER_HAND, Hand
from .match import Match, first_dealer, match_deck
from .result import HandResult, Reason
from .rules import OPTION_DESCRIPTIONS, PROFILES, Rules

__all__ = [
    "CARD_NAMES",
    "GAME_POINTS_RANGE",
    "MAX_DECISIONS_PER_HAND",
    "OPTION_DESCRIPTIONS",
    "PROFILES",
    "SUITS",
    "Hand",
    "HandResult",
    "IllegalAction",
    "MalformedAction",
    "Match",
    "Phase",
    "Reason",
    "Rules",
    "canonical_deck",
    "first_dealer",
    "match_deck",
]
