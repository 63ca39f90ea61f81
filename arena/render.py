"""Text rendering of hands and matches for people who know the game."""

from __future__ import annotations


from arena.engine import Hand, HandResult
from arena.engine.cards import CARD_INDEX, CARD_POINTS
from arena.engine.records import HandRecord
from arena.engine.view import organiser_events

SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def pretty(card: str) -> str:
    """``"TH"`` -> ``"10♥"``."""
    rank = "10" if card[0] == "T" else card[0]
    return rank + SUIT_SYMBOLS[card[1]]


def _cards(cards: list[str]) -> str:
    return " ".join(pretty(c) for c in cards) or "-"


def hand_lines(record: HandRecord, names: tuple[str, str] = ("P0", "P1")) -> list[str]:
    """A hand replayed from its record, trick by trick."""
    start = Hand.deal(record.deck, record.dealer, record.rules)
    hand = Hand.replay(record.to_dict())
    trump = start.view(0)["trump"]
    lines = [
        f"dealer {names[hand.dealer]}, trump {SUIT_SYMBOLS[trump]} (up-card {pretty(start.deck[12])})",
        f"  {names[0]}: {_cards(start.view(0)['hand'])}",
        f"  {names[1]}: {_cards(start.view(1)['hand'])}",
    ]
    tricks = iter(hand.view(0)["tricks"])
    pending: list[str] = []
    for event in organiser_events(hand):
        who = names[event["seat"]] if event["seat"] is not None else "nobody"
        kind = event["type"]
        if kind == "play":
            pending.append(f"{who} {pretty(event['card'])}")
            if len(pending) == 2:
                trick = next(tricks)
                won = names[trick["winner"]]
                value = CARD_POINTS[CARD_INDEX[trick["lead"]]] + CARD_POINTS[CARD_INDEX[trick["follow"]]]
                lines.append(f"  trick: {pending[0]}, {pending[1]} -> {won} takes {value}")
                pending = []
        elif kind == "draw":
            lines.append(f"    {who} draws {pretty(event['card'])}")
        elif kind == "meld":
            lines.append(f"  {who} announces the {SUIT_SYMBOLS[event['suit']]} marriage ({event['value']})")
        elif kind == "exchange":
            lines.append(f"  {who} exchanges {pretty(event['gave'])} for {pretty(event['took'])}")
        elif kind == "close":
            lines.append(f"  {who} closes the stock")
        elif kind == "declare":
            lines.append(f"  {who} declares with {event['total']}")
        elif kind == "pass":
            lines.append(f"  {who} does not declare")
    result = hand.result
    if result is not None:
        lines.append("  " + result_line(result, names))
    return lines


def result_line(result: HandResult, names: tuple[str, str] = ("P0", "P1")) -> str:
    """One line for a hand's result."""
    totals = f"totals {result.totals[0]}-{result.totals[1]}, tricks {result.tricks[0]}-{result.tricks[1]}"
    if result.winner is None:
        return f"tie ({totals})"
    return f"{names[result.winner]} wins {result.game_points} ({result.reason}; {totals})"
