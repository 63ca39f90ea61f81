"""What one seat may know (docs/rules.md R15), and the inverse: a full hand built from a view.

This module is the only reader of a hand's core for the purpose of telling a seat about it;
every card it names is one the seat can know.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .cards import CARD_INDEX, CARD_NAMES, SUITS, names_of
from .core import Core, Event

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


def hand_view(hand: Hand, seat: int, *, private: bool = True) -> dict[str, Any]:
    """The view of protocol/PROTOCOL.md section 6 for ``seat``: exactly the keys of the view table.

    With ``private`` False, the ``events`` and ``tricks`` lists (and their dicts) are the hand's
    memo itself, not copies: for a view that is encoded at once and dropped (the referee's
    requests), never for one a caller keeps or changes.
    """
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1, not {seat!r}")
    core = hand.core
    opponent = 1 - seat
    stock = core.stock
    tricks_won = core.tricks_won
    result = hand.result
    to_move = None if result is not None else core.to_move
    log = core.log
    assert log is not None
    rendered = Rendered.of(hand, log)
    events = rendered.seat_events(seat)
    tricks = rendered.tricks
    opponent_hand = core.hands[opponent]
    return {
        "seat": seat,
        "dealer": hand.dealer,
        "to_move": to_move,
        "trump": SUITS[core.trump],
        "up_card": CARD_NAMES[stock[0]] if stock else None,
        "stock_size": len(stock),
        "closed": core.closed,
        "closer": core.closer if core.closed else None,
        "trick_number": min(core.trick_number, 12),
        "hand": names_of(core.hands[seat]),
        "opponent_hand_size": opponent_hand.bit_count(),
        "opponent_known": names_of(core.shown[opponent] & opponent_hand),
        "lead": _name(core.lead),
        "pending_meld": SUITS[core.pending_meld] if core.pending_meld >= 0 else None,
        "tricks": [trick.copy() for trick in tricks] if private else tricks,
        "marriages": [
            {"seat": e[1], "suit": SUITS[e[2]], "value": e[3], "valid": tricks_won[e[1]] > 0}
            for e in rendered.melds
        ],
        "trick_points": list(core.trick_points),
        "tricks_won": list(tricks_won),
        "totals": core.totals[:],
        "events": [event.copy() for event in events] if private else events,
        "legal_actions": hand.legal_actions() if to_move == seat else [],
        "result": result.to_dict() if result is not None else None,
    }


class Rendered:
    """What the views of one hand rendered of its log so far: each seat's events, the finished
    tricks and the marriages announced. The log only grows (a copied hand or one rebuilt from a
    view has a new one), so a view renders only the entries after them; a different, shorter or
    rewritten log starts over."""

    __slots__ = ("log", "seen", "last", "events", "tricks", "melds", "lead")

    def __init__(self, log: list[Event]) -> None:
        self.log = log
        self.seen = 0  # the log's length at the last view: entries before it are folded in
        self.last: Event | None = None  # its last entry then: a rewritten log shows there
        self.events: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
        self.tricks: list[dict[str, Any]] = []
        self.melds: list[Event] = []  # the log's "meld" entries
        self.lead: Event | None = None  # the lead of the trick in play

    @staticmethod
    def of(hand: Hand, log: list[Event]) -> Rendered:
        """``hand``'s record, started over unless ``log`` is the one it rendered, grown only;
        the entries logged since the last view are folded into its tricks and marriages."""
        memo = hand._rendered
        n = memo.seen if memo is not None else 0
        if memo is None or memo.log is not log or len(log) < n or (n and log[n - 1] is not memo.last):
            memo = hand._rendered = Rendered(log)
            n = 0
        if len(log) > n:
            memo._fold(log, n)
        return memo

    def _fold(self, log: list[Event], start: int) -> None:
        tricks, lead = self.tricks, self.lead
        for event in log[start:]:
            kind = event[0]
            if kind == "play":
                if lead is None:
                    lead = event
                else:
                    tricks.append({"leader": lead[1], "lead": CARD_NAMES[lead[2]], "follow": CARD_NAMES[event[2]],
                                   "winner": event[3]})
                    lead = None
            elif kind == "meld":
                self.melds.append(event)
        self.lead, self.seen, self.last = lead, len(log), log[-1]

    def seat_events(self, seat: int) -> list[dict[str, Any]]:
        """``seat``'s view of every logged event (the memo's own list: copy it to hand it out)."""
        done = self.events[seat]
        if len(done) < self.seen:
            for event in self.log[len(done):self.seen]:
                done.append(_event(event, seat))
        return done


def organiser_events(hand: Hand) -> list[dict[str, Any]]:
    """The hand's event log as the organiser sees it: every drawn card named (never sent to a bot)."""
    log = hand.core.log
    assert log is not None
    return [_event(event, None) for event in log]


def _indices(names: list[str], what: str) -> list[int]:
    try:
        return [CARD_INDEX[name] for name in names]
    except (KeyError, TypeError):
        raise ValueError(f"from_view: {what} holds an unknown card: {names!r}") from None


def core_from_view(view: dict[str, Any], opponent_cards: list[str], stock: list[str], rules: Rules) -> Core:
    """The logging core of ``Hand.from_view``, once the guesses are checked against the view."""
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
    if not view["closed"]:
        expected = view["stock_size"] - (1 if up is not None else 0)
        if len(hidden_stock) != expected:
            raise ValueError(f"from_view: stock has {len(hidden_stock)} cards, the view implies {expected}")
    everything = own + theirs + played + hidden_stock + ([CARD_INDEX[up]] if up is not None else [])
    if len(set(everything)) != len(everything):
        raise ValueError("from_view: a card appears twice among the hand, the guesses and the played cards")
    return Core.from_view(view, theirs, hidden_stock, rules, log=True)


__all__ = ["hand_view", "core_from_view", "organiser_events"]
