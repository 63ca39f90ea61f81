"""The positions ``arena validate`` asks a bot about: explicit decks plus scripted openings.

Each position is a hand dealt from a fixed deck (``Hand.deal``, docs/rules.md R3.2) and the actions
played before the bot is asked; the seat to move then is the bot's seat. ``DECISION_TYPES``
cover every kind of decision a hand can ask (lead, follow, pre-draw, final, after a meld);
``EDGE_STATES`` are the corners a bot is most likely to get wrong. The rules are the default
profile. ``tests/arena/test_validate.py`` checks that each position is what its name says.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.engine import Hand, Rules


@dataclass(frozen=True, slots=True)
class Position:
    """A hand state: ``deck`` (24 cards c0..c23, space-separated), the dealer, and the
    actions applied before the bot is asked (`` / ``-separated)."""

    name: str
    about: str
    deck: str
    dealer: int
    prefix: str = ""

    def actions(self) -> list[str]:
        """The scripted opening, one action string each."""
        return [a.strip() for a in self.prefix.split("/") if a.strip()]

    def hand(self, rules: Rules | None = None) -> Hand:
        """A fresh hand at this position (the scripted actions applied)."""
        hand = Hand.deal(self.deck.split(), self.dealer, rules or Rules())
        for action in self.actions():
            hand.apply(action)
        if hand.to_move is None:
            raise ValueError(f"position {self.name}: the hand is over after the opening")
        return hand


_DECK_A = "QS 9C AS JS QC JC TC 9D TD AD TS 9S 9H JH QD KH AC AH TH KS KD QH JD KC"

DECISION_TYPES: tuple[Position, ...] = (
    Position("lead", "first lead of the hand: close, declare or lead a card", _DECK_A, 0),
    Position("follow", "follow in an open stock: any card",
             "KH JH TC TD JD JS 9S KS TH KC JC TS QC 9H QH QS 9D AD QD AS 9C AC KD AH", 1,
             "play TC / play JC / draw / play JH"),
    Position("pre-draw", "just won a trick with the stock open: close or draw", _DECK_A, 0,
             "play QS / play TS"),
    Position("final", "won the last trick: declare or pass", _DECK_A, 0,
             "play QS / play TS / close / play 9S / play 9D / play JC / play TD / play JS / play 9C"),
    Position("after-meld", "melded spades on the closing lead: declare, or lead KS or QS",
             "JD 9C TS AH AS QS AC 9D 9S QH QD TC 9H TH QC KS TD JH AD KD JC KH JS KC", 0,
             "play AC / play QH / draw / play AH / play 9C / draw / play TH / play QC / draw / "
             "play TC / play TD / close / meld S"),
)

EDGE_STATES: tuple[Position, ...] = (
    Position("closed-stock", "follow after the opponent closed: must head the lead", _DECK_A, 1,
             "play TC / play QC / close / play AS"),
    Position("exhausted-stock", "follow with the stock exhausted: must follow suit",
             "AS KD AH AC QD KC 9S TH KS 9D JH 9H AD QC JS JD TS QS JC TD KH TC 9C QH", 1,
             "play TH / play KC / draw / play 9S / play JH / draw / play JD / play QD / draw / "
             "exchange / play 9H / play JC / draw / play AD / play AH / draw / play TS / play KS / "
             "play JS / play 9C"),
    Position("marriage-first-lead", "first lead holding KC and QC: a marriage may be announced",
             "KC QC KD KH AS TS QH 9H TC 9C JD JC AH 9S JH QS QD KS TD JS TH 9D AC AD", 0),
    Position("trump-nine-exchange", "on lead holding the trump nine: exchange is offered",
             "9H QS KD 9C JC JD JH QC TD TS AC 9S KS TH 9D TC JS QH AH AD KH KC AS QD", 1,
             "play KD / play JD / draw / play JH / play TS / draw"),
    Position("last-trick", "leading the twelfth trick with one card: declare or play it",
             "JC 9S AD TH AC KC TD AS 9D 9H JS KS AH KH JD QC JH 9C QH TS KD QD TC QS", 0,
             "play 9S / play AC / draw / play AD / play JD / draw / play AS / play JH / draw / "
             "exchange / play TH / play JC / draw / play TS / play KD / draw / play JS / play KH / "
             "play QC / play QD / play TC / play QS / play AH"),
    Position("false-declaration", "just closed with a total under 66: declare is legal but false",
             _DECK_A, 0, "play QS / play TS / close"),
)

# Hands played out whole, from the deal, for the interleaved-games check (max_games).
INTERLEAVED_DEALS: tuple[Position, ...] = tuple(
    Position(f"deal-{i}", "a whole hand from the deal", deck, i % 2)
    for i, deck in enumerate((
        _DECK_A,
        "KH JH TC TD JD JS 9S KS TH KC JC TS QC 9H QH QS 9D AD QD AS 9C AC KD AH",
        "JD 9C TS AH AS QS AC 9D 9S QH QD TC 9H TH QC KS TD JH AD KD JC KH JS KC",
        "AS KD AH AC QD KC 9S TH KS 9D JH 9H AD QC JS JD TS QS JC TD KH TC 9C QH",
        "KC QC KD KH AS TS QH 9H TC 9C JD JC AH 9S JH QS QD KS TD JS TH 9D AC AD",
        "9H QS KD 9C JC JD JH QC TD TS AC 9S KS TH 9D TC JS QH AH AD KH KC AS QD",
        "JC 9S AD TH AC KC TD AS 9D 9H JS KS AH KH JD QC JH 9C QH TS KD QD TC QS",
        "QS 9C AS JS QC JC TC 9D TD AD TS 9S 9H JH QD KH AC AH TH KS KD QH JD KC",
    ))
)
