"""One hand (deal) of Sixty-Six: the checked string layer over the rules core (``core``).

``Hand`` speaks the public API of the engine (docs/architecture.md#engine-api): card and action strings,
views, records. ``Hand.apply`` is the one checked door: it looks the action up among the
legal ones and hands its int to the ``Core`` underneath, which changes the state, applies
forced single actions (R5.1) and logs the events the views are made of.
"""

from __future__ import annotations

import random
from typing import Any

from .cards import CARD_NAMES, HIGH_CARDS, LOW_CARDS, SUITS, parse_deck
from .core import _DO, ACTION_BITS, ACTION_INDEX, ACTION_NAMES, FOLLOW, SPECIAL_ACTIONS, Core, Phase
from .errors import IllegalAction, MalformedAction
from .result import HandResult
from .rules import Rules
from .view import Rendered, core_from_view, hand_view

_DEFAULT_RULES = Rules()
# Action strings by the parts of a legal mask, as the core's ``legal`` has them in ints.
_SPECIAL_NAMES = tuple([ACTION_NAMES[a] for a in actions] for actions in SPECIAL_ACTIONS)
_LOW_PLAYS = tuple([ACTION_NAMES[c] for c in cards] for cards in LOW_CARDS)
_HIGH_PLAYS = tuple([ACTION_NAMES[c] for c in cards] for cards in HIGH_CARDS)

# The most decisions one hand can ask of the two seats together: 24 card plays, 4 melds,
# 1 exchange, 1 close, 5 pre-draw choices, 1 final choice.
MAX_DECISIONS_PER_HAND = 36
GAME_POINTS_RANGE = (0, 3)


class Hand:
    """One hand of Sixty-Six, from the deal to the result (docs/architecture.md#engine-api)."""

    __slots__ = ("rules", "deck", "dealer", "to_move", "is_over", "_core", "_actions", "_result", "_rendered")

    rules: Rules
    deck: tuple[str, ...]
    dealer: int
    to_move: int | None
    """The seat that must act (it always has >= 2 legal actions), or None when over."""
    is_over: bool
    """Whether the hand has ended."""
    _core: Core
    _actions: list[str]
    _result: HandResult | None
    _rendered: Rendered | None  # what the views rendered of the log so far (view.py)

    # ----------------------------------------------------------------- construction

    @classmethod
    def deal(cls, deck: list[str] | tuple[str, ...], dealer: int = 0, rules: Rules | None = None) -> Hand:
        """Deal ``deck`` (24 card names in order c0..c23) as docs/rules.md R3.2 says."""
        if dealer not in (0, 1) or isinstance(dealer, bool):
            raise ValueError(f"dealer must be 0 or 1, not {dealer!r}")
        rules = rules if rules is not None else _DEFAULT_RULES
        return cls._wrap(Core.deal(parse_deck(deck), dealer, rules, log=True), tuple(deck), dealer)

    @classmethod
    def deal_seeded(cls, seed: Any, dealer: int = 0, rules: Rules | None = None) -> Hand:
        """Deal a deck shuffled with ``random.Random(seed).shuffle`` of the canonical order."""
        deck = list(CARD_NAMES)
        random.Random(seed).shuffle(deck)
        return cls.deal(deck, dealer, rules)

    @classmethod
    def replay(cls, record: dict[str, Any]) -> Hand:
        """Rebuild a hand from ``record()``, checking every step (IllegalAction if bad)."""
        try:
            rules = Rules(**record.get("rules", {}))
            hand = cls.deal(record["deck"], record["dealer"], rules)
            actions = record["actions"]
        except (KeyError, TypeError, ValueError) as exc:
            raise IllegalAction(f"bad hand record: {exc}") from exc
        for i, action in enumerate(actions):
            try:
                hand.apply(action)
            except IllegalAction as exc:
                raise IllegalAction(f"bad hand record at action {i}: {exc}") from exc
        return hand

    @classmethod
    def from_view(
        cls, view: dict[str, Any], opponent_cards: list[str], stock: list[str], rules: Rules | None = None
    ) -> Hand:
        """A full hand consistent with ``view`` plus a guess of the hidden cards.

        ``opponent_cards`` is the opponent's hand; ``stock`` the face-down stock cards in draw
        order (the up-card stays where the view says; once closed, ``stock`` may name the dead
        cards or be empty). ``rules`` defaults to the default profile. ValueError if the
        guesses do not fit the view.
        """
        core = core_from_view(view, opponent_cards, stock, rules or _DEFAULT_RULES)
        return cls._wrap(core, (), view["dealer"])

    @classmethod
    def _wrap(cls, core: Core, deck: tuple[str, ...], dealer: int) -> Hand:
        """A hand whose state is ``core`` (a logging core) and nothing applied yet."""
        hand = cls.__new__(cls)
        hand.rules = core.rules
        hand.deck = deck
        hand.dealer = dealer
        hand._core = core
        hand._actions = []
        hand._result = None
        hand._rendered = None
        hand._sync()
        return hand

    def copy(self) -> Hand:
        """An independent copy (cheap; search bots use ``core.Core`` directly)."""
        new = Hand.__new__(Hand)
        new.rules = self.rules
        new.deck = self.deck
        new.dealer = self.dealer
        new._core = self._core.copy()
        new._actions = self._actions[:]
        new._result = self._result
        new._rendered = None
        new.to_move = self.to_move
        new.is_over = self.is_over
        return new

    # ----------------------------------------------------------------- queries

    @property
    def core(self) -> Core:
        """The rules core under this hand: the whole truth, hidden cards included (the
        organiser's; never sent to a bot). Read it; change it only through ``apply``."""
        return self._core


    @property
    def result(self) -> HandResult | None:
        """None until the hand is over, then its HandResult."""
        if self._result is None and self._core.result is not None:
            self._result = self._core.hand_result()
        return self._result

    def legal_actions(self) -> list[str]:
        """The legal actions of ``to_move`` in canonical order; [] when over."""
        m = self._core.legal_mask
        special = m >> 24
        if special:
            return _SPECIAL_NAMES[special] + _LOW_PLAYS[m & 4095] + _HIGH_PLAYS[m >> 12 & 4095]
        return _LOW_PLAYS[m & 4095] + _HIGH_PLAYS[m >> 12]

    def total(self, seat: int) -> int:
        """The seat's R9 total now: tricks, valid marriages and the last-trick bonus."""
        return self._core.totals[seat]

    def view(self, seat: int) -> dict[str, Any]:
        """Everything ``seat`` may know now (docs/rules.md R15), as a JSON-ready dict."""
        return hand_view(self, seat)

    def record(self) -> dict[str, Any]:
        """The complete description of this hand: rules, deck, dealer and applied actions."""
        if not self.deck:
            raise ValueError("a hand built by from_view() has no deal to record")
        return {
            "rules": self.rules.to_dict(),
            "deck": list(self.deck),
            "dealer": self.dealer,
            "actions": self._actions[:],
        }

    def __repr__(self) -> str:
        core = self._core
        state = "over" if core.result is not None else f"{core.phase.name.lower()} seat {core.to_move}"
        return f"<Hand trump={SUITS[core.trump]} trick={core.trick_number} {state}>"

    # ----------------------------------------------------------------- the checked door

    def apply(self, action: str) -> None:
        """Apply ``action`` for ``to_move``; IllegalAction (state unchanged) if it is not legal."""
        core = self._core
        try:
            a = ACTION_INDEX[action]
        except (KeyError, TypeError):
            raise self._illegal(action) from None
        if not core.legal_mask & ACTION_BITS[a]:
            raise self._illegal(action)
        self._actions.append(action)
        _DO[a](core, a)  # core.apply(a) inlined: one call less on the public API's hottest path
        core._settle()
        if core.result is None:
            self.to_move = core.to_move
        else:
            self._sync()

    def _sync(self) -> None:
        """``to_move`` and ``is_over`` from the core."""
        core = self._core
        self.is_over = core.result is not None
        self.to_move = None if self.is_over else core.to_move

    def _illegal(self, action: object) -> IllegalAction:
        """The error for an action that is not in the legal list, saying why."""
        if not isinstance(action, str) or action not in ACTION_INDEX:
            return MalformedAction(f"{action!r} is not an action; actions look like 'play AH', "
                                   f"'meld H', 'exchange', 'close', 'draw', 'declare', 'pass'")
        core = self._core
        if core.result is not None:
            return IllegalAction(f"{action!r}: the hand is over")
        a = ACTION_INDEX[action]
        seat = core.to_move
        why = "not legal now"
        if a < 24 and not core.hands[seat] >> a & 1:  # actions 0..23 play that card
            why = f"seat {seat} does not hold {CARD_NAMES[a]}"
        elif a < 24 and core.phase is FOLLOW:
            why = "the follower must head, follow suit or trump (R6.3)"
        return IllegalAction(f"{action!r} for seat {seat}: {why}; legal: {self.legal_actions()}")


__all__ = ["Hand", "Phase", "MAX_DECISIONS_PER_HAND", "GAME_POINTS_RANGE"]
