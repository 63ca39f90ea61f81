"""What one seat may know (docs/rules.md R15), and the inverse: a full hand built from a view.

This module is the only reader of a hand's hidden fields for the purpose of telling a
seat about them; every card it names is one the seat can know.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .cards import CARD_INDEX, CARD_NAMES, KING, QUEEN, SUITS, card
from .result import HandResult

if TYPE_CHECKING:
    from .hand import Hand
    from .rules import Rules


def _name(c: int | None) -> str | None:
    return None if c is None or c < 0 else CARD_NAMES[c]


def _event(event: tuple[Any, ...], seat: int | None) -> dict[str, Any]:
    """The public form of one logged event, as ``seat`` sees it (None: the organiser, who sees all)."""
    kind = event[0]
    if kind == "play":
        return {"type": "play", "seat": event[1], "card": CARD_NAMES[event[2]]}
    if kind == "draw":
        shown = seat is None or event[1] == seat or event[3]
        return {"type": "draw", "seat": event[1], "card": _name(event[2]) if shown else None}
    if kind == "meld":
        return {"type": "meld", "seat": event[1], "suit": SUITS[event[2]], "value": event[3]}
    if kind == "exchange":
        return {"type": "exchange", "seat": event[1], "gave": CARD_NAMES[event[2]], "took": CARD_NAMES[event[3]]}
    if kind == "close":
        return {"type": "close", "seat": event[1], "trick_number": event[2]}
    if kind == "declare":
        return {"type": "declare", "seat": event[1], "total": event[2]}
    if kind == "pass":
        return {"type": "pass", "seat": event[1]}
    return {"type": "end", "seat": event[1], "game_points": event[2], "reason": str(event[3])}


def hand_view(hand: Hand, seat: int) -> dict[str, Any]:
    """The view of protocol/PROTOCOL.md section 6 for ``seat``: exactly the keys of the view table."""
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1, not {seat!r}")
    opponent = 1 - seat
    stock = hand._stock
    tricks_won = hand._tricks_won
    to_move = hand.to_move
    result = hand._result
    return {
        "seat": seat,
        "dealer": hand.dealer,
        "to_move": to_move,
        "trump": SUITS[hand.trump],
        "up_card": CARD_NAMES[stock[0]] if stock else None,
        "stock_size": len(stock),
        "closed": hand._closed,
        "closer": hand._closer if hand._closed else None,
        "trick_number": min(hand._trick_number, 12),
        "hand": [CARD_NAMES[c] for c in hand._cards[seat]],
        "opponent_hand_size": len(hand._cards[opponent]),
        "opponent_known": [CARD_NAMES[c] for c in sorted(hand._known[opponent])],
        "lead": _name(hand._lead),
        "pending_meld": SUITS[hand._pending_meld] if hand._pending_meld >= 0 else None,
        "tricks": [
            {"leader": leader, "lead": CARD_NAMES[lead], "follow": CARD_NAMES[follow], "winner": winner}
            for leader, lead, follow, winner in hand._tricks
        ],
        "marriages": [
            {"seat": s, "suit": SUITS[suit], "value": value, "valid": tricks_won[s] > 0}
            for s, suit, value in hand._marriages
        ],
        "trick_points": list(hand._trick_points),
        "tricks_won": list(tricks_won),
        "totals": [hand.total(0), hand.total(1)],
        "events": [_event(event, seat) for event in hand._events],
        "legal_actions": hand.legal_actions() if to_move == seat else [],
        "result": result.to_dict() if result is not None else None,
    }


def organiser_events(hand: Hand) -> list[dict[str, Any]]:
    """The hand's event log as the organiser sees it: every drawn card named (never sent to a bot)."""
    return [_event(event, None) for event in hand._events]


def _indices(names: list[str], what: str) -> list[int]:
    try:
        return [CARD_INDEX[name] for name in names]
    except (KeyError, TypeError):
        raise ValueError(f"from_view: {what} holds an unknown card: {names!r}") from None


def _event_tuple(event: dict[str, Any], viewer: int) -> tuple[Any, ...]:
    """The engine's logged form of an event in ``viewer``'s view (unknown cards as None)."""
    kind, seat = event["type"], event["seat"]
    if kind == "play":
        return ("play", seat, CARD_INDEX[event["card"]])
    if kind == "draw":
        drawn = event["card"]
        if drawn is None:
            return ("draw", seat, None, False)
        return ("draw", seat, CARD_INDEX[drawn], seat != viewer)  # an opponent's draw shown is public
    if kind == "meld":
        return ("meld", seat, SUITS.index(event["suit"]), event["value"])
    if kind == "exchange":
        return ("exchange", seat, CARD_INDEX[event["gave"]], CARD_INDEX[event["took"]])
    if kind == "close":
        return ("close", seat, event["trick_number"])
    if kind == "declare":
        return ("declare", seat, event["total"])
    if kind == "pass":
        return ("pass", seat)
    return ("end", seat, event["game_points"], event["reason"])


def _publicly_known(events: list[dict[str, Any]], seat: int, held: list[int]) -> set[int]:
    """Cards of ``seat`` made public by marriages, the exchange or the last draw, still held."""
    known: set[int] = set()
    for event in events:
        if event["seat"] != seat:
            continue
        if event["type"] == "meld":
            suit = SUITS.index(event["suit"])
            known.update((card(suit, KING), card(suit, QUEEN)))
        elif event["type"] == "exchange":
            known.add(CARD_INDEX[event["took"]])
    draws = [e for e in events if e["type"] == "draw"]
    if len(draws) == 12:  # the stock ran out: the loser of trick 6 took the up-card face up
        last = draws[-1]
        if last["seat"] == seat and last["card"] is not None:
            known.add(CARD_INDEX[last["card"]])
    return known & set(held)


def hand_from_view(
    hand: Hand, view: dict[str, Any], opponent_cards: list[str], stock: list[str], rules: Rules
) -> Hand:
    """Fill the blank ``hand`` so that it is the real hand if the guesses are right."""
    from .hand import Phase, _STEP_CLOSED, _STEP_EXCHANGED, _STEP_MELDED, _STEP_NONE

    seat = view["seat"]
    opponent = 1 - seat
    own = _indices(view["hand"], "view['hand']")
    theirs = _indices(list(opponent_cards), "opponent_cards")
    hidden_stock = _indices(list(stock), "stock")
    if len(theirs) != view["opponent_hand_size"]:
        raise ValueError(
            f"from_view: opponent_cards has {len(theirs)} cards, the view says {view['opponent_hand_size']}"
        )
    missing = set(_indices(view["opponent_known"], "opponent_known")) - set(theirs)
    if missing:
        raise ValueError(f"from_view: opponent_cards lacks known cards {sorted(CARD_NAMES[c] for c in missing)}")
    up = view["up_card"]
    played = [CARD_INDEX[e["card"]] for e in view["events"] if e["type"] == "play"]
    if view["closed"]:
        live_stock: list[int] = []
    else:
        expected = view["stock_size"] - (1 if up is not None else 0)
        if len(hidden_stock) != expected:
            raise ValueError(f"from_view: stock has {len(hidden_stock)} cards, the view implies {expected}")
        live_stock = ([CARD_INDEX[up]] if up is not None else []) + hidden_stock[::-1]
    everything = own + theirs + played + live_stock + (hidden_stock if view["closed"] else [])
    if len(set(everything)) != len(everything):
        raise ValueError("from_view: a card appears twice among the hand, the guesses and the played cards")

    hand.rules = rules
    hand.deck = ()
    hand.dealer = view["dealer"]
    hand.trump = SUITS.index(view["trump"])
    hand._init_play_state(view["to_move"] if view["to_move"] is not None else seat)
    cards: list[list[int]] = [[], []]
    cards[seat], cards[opponent] = sorted(own), sorted(theirs)
    hand._cards = cards
    hand._stock = live_stock
    hand._dead = hidden_stock[::-1] if view["closed"] else []
    hand._known[seat] = _publicly_known(view["events"], seat, own)
    hand._known[opponent] = _publicly_known(view["events"], opponent, theirs)
    hand._tricks = [(t["leader"], CARD_INDEX[t["lead"]], CARD_INDEX[t["follow"]], t["winner"]) for t in view["tricks"]]
    hand._trick_number = len(hand._tricks) + 1
    hand._trick_points = list(view["trick_points"])
    hand._tricks_won = list(view["tricks_won"])
    hand._marriages = [(m["seat"], SUITS.index(m["suit"]), m["value"]) for m in view["marriages"]]
    for s, _, value in hand._marriages:
        hand._marriage_points[s] += value
    hand._events = [_event_tuple(e, seat) for e in view["events"]]
    hand._lead = CARD_INDEX[view["lead"]] if view["lead"] is not None else -1
    hand._pending_meld = SUITS.index(view["pending_meld"]) if view["pending_meld"] is not None else -1

    if view["closed"]:
        hand._closed = True
        hand._closer = view["closer"]
        close = next(e for e in view["events"] if e["type"] == "close")
        before = hand._tricks[: close["trick_number"] - 1]
        hand._opp_tricks_at_close = sum(1 for t in before if t[3] != hand._closer)
    last_play = max((i for i, e in enumerate(view["events"]) if e["type"] == "play"), default=-1)
    this_lead = [e["type"] for e in view["events"][last_play + 1 :]]
    hand._closing_lead = "close" in this_lead
    if "meld" in this_lead:
        hand._step = _STEP_MELDED
    elif "close" in this_lead:
        hand._step = _STEP_CLOSED
    elif "exchange" in this_lead:
        hand._step = _STEP_EXCHANGED
    else:
        hand._step = _STEP_NONE
    if len(hand._tricks) == 12 and not hand._closed:
        hand._bonus_seat = hand._tricks[-1][3]

    if view["result"] is not None:
        hand._result = HandResult.from_dict(view["result"])
        hand._phase = Phase.OVER
    elif hand._lead >= 0:
        hand._phase = Phase.FOLLOW
    elif not own and not theirs:
        hand._phase = Phase.FINAL
    elif live_stock and len(own) < 6:
        hand._phase = Phase.PRE_DRAW
    else:
        hand._phase = Phase.LEAD
    hand._settle()
    return hand


__all__ = ["hand_view", "hand_from_view", "organiser_events"]
