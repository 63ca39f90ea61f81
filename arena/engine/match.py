"""A match: hands dealt from seeds until a seat reaches the target (docs/rules.md R2, R13.4, R14)."""

from __future__ import annotations

import random
from typing import Any

from .cards import CARD_NAMES
from .hand import Hand
from .result import HandResult
from .rules import Rules
from .view import hand_view


def match_deck(seed: Any, hand_index: int) -> list[str]:
    """The deck of hand ``hand_index`` (0-based) of the match with ``seed`` (docs/architecture.md#engine-api)."""
    deck = list(CARD_NAMES)
    random.Random(f"{seed}:{hand_index}").shuffle(deck)
    return deck


def match_view(hand: Hand, seat: int, *, hand_index: int, score: tuple[int, int], carry: int,
               target: int, private: bool = True) -> dict[str, Any]:
    """``hand.view(seat)`` plus ``"match"``: the match as it stood while ``hand`` was played
    (``private`` as for ``hand_view``).

    The one builder of a view's ``match`` part (its keys are ``protocol.messages.MATCH_KEYS``,
    checked on the wire): ``Match.view``, the referee's ``hand_over`` views (the score and carry
    from before the hand was scored) and the validation probe's single-hand game all use it.
    """
    view = hand_view(hand, seat, private=private)
    view["match"] = {
        "hand_index": hand_index,
        "dealer": hand.dealer,
        "score": list(score),
        "carry": carry,
        "target": target,
    }
    return view


def first_dealer(seed: Any, rules: Rules) -> int:
    """The first dealer: the rules' seat, or ``random.Random(seed).randrange(2)``."""
    if rules.first_dealer == "random":
        return random.Random(seed).randrange(2)
    return int(rules.first_dealer)


class Match:
    """A seeded match of Sixty-Six; ``apply`` drives the current hand."""

    __slots__ = ("rules", "seed", "hand", "hand_index", "score", "carry", "results", "records", "winner")

    def __init__(self, rules: Rules | None = None, seed: Any = 0) -> None:
        self.rules = rules if rules is not None else Rules()
        self.seed = seed
        self.hand_index = 0
        self.score: tuple[int, int] = (0, 0)
        self.carry = 0
        self.results: list[HandResult] = []
        self.records: list[dict[str, Any]] = []
        self.winner: int | None = None
        self.hand = Hand.deal(match_deck(seed, 0), first_dealer(seed, self.rules), self.rules)

    @property
    def is_over(self) -> bool:
        """Whether a seat has reached the match target."""
        return self.winner is not None

    @property
    def to_move(self) -> int | None:
        """The seat to act in the current hand, or None once the match is over."""
        return None if self.winner is not None else self.hand.to_move

    @property
    def dealer(self) -> int:
        """The dealer of the current hand."""
        return self.hand.dealer

    def legal_actions(self) -> list[str]:
        """The legal actions in the current hand ([] once the match is over)."""
        return [] if self.winner is not None else self.hand.legal_actions()

    def apply(self, action: str) -> HandResult | None:
        """Apply ``action`` to the current hand; return its HandResult if that ended it."""
        if self.winner is not None:
            from .errors import IllegalAction

            raise IllegalAction(f"{action!r}: the match is over")
        hand = self.hand
        hand.apply(action)
        result = hand.result
        if result is None:
            return None
        self._score_hand(result)
        return result

    def _score_hand(self, result: HandResult) -> None:
        rules = self.rules
        hand = self.hand
        self.results.append(result)
        self.records.append(hand.record())
        if result.winner is None:
            if rules.tie_rule == "carry_accumulate":
                self.carry += 1
            elif rules.tie_rule == "carry_max1":
                self.carry = 1
            next_dealer = 1 - hand.dealer if rules.dealer_rotation == "alternate" else hand.dealer
        else:
            score = list(self.score)
            score[result.winner] += result.game_points + self.carry
            self.score = (score[0], score[1])
            self.carry = 0
            if score[result.winner] >= rules.match_target:
                self.winner = result.winner
                return
            if rules.dealer_rotation == "alternate":
                next_dealer = 1 - hand.dealer
            elif rules.dealer_rotation == "winner_deals":
                next_dealer = result.winner
            else:
                next_dealer = 1 - result.winner
        self.hand_index += 1
        self.hand = Hand.deal(match_deck(self.seed, self.hand_index), next_dealer, rules)

    def view(self, seat: int) -> dict[str, Any]:
        """``hand.view(seat)`` plus the match fields under ``"match"``."""
        return match_view(self.hand, seat, hand_index=self.hand_index, score=self.score, carry=self.carry,
                          target=self.rules.match_target)

    def __repr__(self) -> str:
        return f"<Match seed={self.seed!r} hand={self.hand_index} score={self.score}>"
