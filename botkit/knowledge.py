"""What one seat knows: card counting from its view, and worlds consistent with it.

``Situation`` is the input of the policies: the seat's cards, the cards it has not seen
(``unseen``: in the opponent's hand or the stock), the cards the opponent is known to hold,
the cards the opponent cannot hold (``forbidden``: voids and "could not head" facts revealed by
strict Phase-B follows), scores and the phase. It is built from a view (``from_view``) or,
inside search, from the engine's ``Core`` for one seat (``from_game``, public knowledge only).

``Knowledge.sample`` draws a world: the opponent's unknown cards and the hidden stock order,
uniformly among those consistent with the view, for ``Hand.from_view`` / ``Core.from_view``.
"""

from __future__ import annotations

import random
from typing import Any

from arena.engine import Rules
from arena.engine.core import FINAL, FOLLOW, LEAD, MELD, PRE_DRAW, STEP_MELDED, Core
from arena.engine.scoring import seat_total
from arena.engine.tricks import revealed_by_follow

from .cards import ALL, CARD_INDEX, SUITS, cards_of

_PHASES = {"lead": LEAD, "follow": FOLLOW, "pre_draw": PRE_DRAW, "final": FINAL}


class Situation:
    """One seat's knowledge at a decision (card masks use the engine's card indices)."""

    __slots__ = (
        "rules", "seat", "trump", "mine", "unseen", "opp_known", "forbidden", "up", "stock_size",
        "closed", "closer", "otc", "opp_size", "tp", "tw", "mp", "lead", "phase", "pending_meld",
        "trick_number",
    )

    rules: Rules
    seat: int
    trump: int
    mine: int
    unseen: int
    opp_known: int
    forbidden: int
    up: int
    stock_size: int
    closed: bool
    closer: int
    otc: int
    opp_size: int
    tp: tuple[int, int]
    tw: tuple[int, int]
    mp: tuple[int, int]
    lead: int
    phase: int
    pending_meld: int
    trick_number: int

    @property
    def strict(self) -> bool:
        """Phase B (closed or exhausted stock): follows must head, follow suit, trump."""
        return self.closed or self.stock_size == 0

    @property
    def opp_possible(self) -> int:
        """Every card the opponent may hold now."""
        return self.opp_known | (self.unseen & ~self.forbidden)

    def total(self, seat: int) -> int:
        """A seat's R9 total (no last-trick bonus: policies act before the final trick ends)."""
        return seat_total(self.tp[seat], self.tw[seat], self.mp[seat])

    @classmethod
    def from_view(cls, view: dict[str, Any], rules: Rules, forbidden: int = 0) -> Situation:
        """The situation of the view's seat."""
        s = cls.__new__(cls)
        s.rules = rules
        seat = s.seat = view["seat"]
        s.trump = SUITS.index(view["trump"])
        mine = 0
        for name in view["hand"]:
            mine |= 1 << CARD_INDEX[name]
        s.mine = mine
        opp_known = 0
        for name in view["opponent_known"]:
            opp_known |= 1 << CARD_INDEX[name]
        s.opp_known = opp_known
        played = 0
        for e in view["events"]:
            if e["type"] == "play":
                played |= 1 << CARD_INDEX[e["card"]]
        up = view["up_card"]
        s.up = CARD_INDEX[up] if up is not None else -1
        seen = mine | opp_known | played | ((1 << s.up) if s.up >= 0 else 0)
        s.unseen = ALL & ~seen
        s.forbidden = forbidden
        s.stock_size = view["stock_size"]
        s.closed = view["closed"]
        s.closer = view["closer"] if view["closer"] is not None else -1
        s.otc = 0
        if s.closed:
            close = next(e for e in view["events"] if e["type"] == "close")
            s.otc = sum(1 for t in view["tricks"][: close["trick_number"] - 1] if t["winner"] != s.closer)
        s.opp_size = view["opponent_hand_size"]
        s.tp = (view["trick_points"][0], view["trick_points"][1])
        s.tw = (view["tricks_won"][0], view["tricks_won"][1])
        mp = [0, 0]
        for m in view["marriages"]:
            mp[m["seat"]] += m["value"]
        s.mp = (mp[0], mp[1])
        s.lead = CARD_INDEX[view["lead"]] if view["lead"] is not None else -1
        s.pending_meld = SUITS.index(view["pending_meld"]) if view["pending_meld"] is not None else -1
        s.trick_number = view["trick_number"]
        legal = view["legal_actions"]
        if s.lead >= 0:
            s.phase = FOLLOW
        elif "draw" in legal:
            s.phase = PRE_DRAW
        elif not mine:
            s.phase = FINAL
        else:
            s.phase = LEAD
        return s

    @classmethod
    def from_game(cls, g: Core, seat: int) -> Situation:
        """The public-knowledge situation of ``seat`` in a searched world."""
        s = cls.__new__(cls)
        s.rules = g.rules
        s.seat = seat
        s.trump = g.trump
        opp = 1 - seat
        mine = s.mine = g.hands[seat]
        opp_known = s.opp_known = g.shown[opp] & g.hands[opp]
        stock = g.stock
        up = s.up = stock[0] if stock else -1
        s.unseen = ALL & ~(mine | opp_known | g.played | ((1 << up) if up >= 0 else 0))
        s.forbidden = g.absent[opp]
        s.stock_size = len(stock)
        s.closed = g.closed
        s.closer = g.closer
        s.otc = g.opp_tricks_at_close
        s.opp_size = g.hands[opp].bit_count()
        tp, tw, mp = g.trick_points, g.tricks_won, g.marriage_points
        s.tp = (tp[0], tp[1])
        s.tw = (tw[0], tw[1])
        s.mp = (mp[0], mp[1])
        s.lead = g.lead
        s.phase = g.phase
        s.pending_meld = g.pending_meld if g.step == STEP_MELDED else -1
        s.trick_number = min(g.trick_number, 12)
        return s


def strict_tricks(view: dict[str, Any]) -> list[tuple[int, int, int, bool]]:
    """Every finished trick as (leader, lead, follow, strict), strict = played in Phase B."""
    out: list[tuple[int, int, int, bool]] = []
    strict = False
    draws = 0
    lead: tuple[int, int] | None = None
    for e in view["events"]:
        kind = e["type"]
        if kind == "close":
            strict = True
        elif kind == "draw":
            draws += 1
            if draws == 12:
                strict = True
        elif kind == "play":
            if lead is None:
                lead = (e["seat"], CARD_INDEX[e["card"]])
            else:
                out.append((lead[0], lead[1], CARD_INDEX[e["card"]], strict))
                lead = None
    return out


def inferred_absent(view: dict[str, Any], rules: Rules, dead_up: int = -1) -> tuple[int, int]:
    """Per seat, the cards it cannot hold now: what its strict follows revealed (voids,
    failure to head) and, once closed, the up-card turned down (``dead_up``, if known)."""
    trump = SUITS.index(view["trump"])
    absent = [0, 0]
    for leader, lead, follow, strict in strict_tricks(view):
        if not strict:
            continue
        absent[1 - leader] |= revealed_by_follow(rules, lead, follow, trump)
    if view["closed"] and dead_up >= 0:
        absent[0] |= 1 << dead_up
        absent[1] |= 1 << dead_up
    return absent[0], absent[1]


class Knowledge:
    """The view's seat's knowledge, ready to sample worlds from."""

    __slots__ = ("view", "rules", "absent", "situation", "unknown_count", "hidden_count", "_template")

    def __init__(self, view: dict[str, Any], rules: Rules, dead_up: int = -1) -> None:
        """``dead_up``: the up-card turned down by a close, if the seat saw it (the view of a
        closed hand no longer shows it); it is dead, so not in the opponent's hand."""
        self.view = view
        self.rules = rules
        self.absent = inferred_absent(view, rules, dead_up)
        sit = self.situation = Situation.from_view(view, rules, self.absent[1 - view["seat"]])
        self.unknown_count = sit.opp_size - sit.opp_known.bit_count()
        self.hidden_count = sit.unseen.bit_count() - self.unknown_count
        if (sit.unseen & ~sit.forbidden).bit_count() < self.unknown_count:
            sit.forbidden = 0  # should not happen; never let inference make sampling impossible
            self.absent = (0, 0)
        self._template: Core | None = None

    def sample(self, rng: random.Random) -> tuple[list[int], list[int]]:
        """A uniform world: (opponent's cards, hidden stock cards in draw order)."""
        sit = self.situation
        allowed = cards_of(sit.unseen & ~sit.forbidden)
        theirs = rng.sample(allowed, self.unknown_count)
        taken = 0
        for c in theirs:
            taken |= 1 << c
        rest = cards_of(sit.unseen & ~taken)
        rng.shuffle(rest)
        return cards_of(sit.opp_known) + theirs, rest

    def world(self, rng: random.Random) -> Core:
        """A sampled world: ``Core.from_view`` of a sample. When the seat is to
        move, later worlds copy the first one and swap in the new hidden cards (the same
        result, without reading the view again)."""
        opp, stock = self.sample(rng)
        template = self._template
        if template is None:
            g = Core.from_view(self.view, opp, stock, self.rules, self.absent)
            if self.view["to_move"] == self.situation.seat:
                self._template = g.copy()
            return g
        g = template.copy()
        mask = 0
        for c in opp:
            mask |= 1 << c
        g.hands[1 - self.situation.seat] = mask
        if g.stock:
            g.stock = [g.stock[0]] + stock[::-1]
        return g


def meld_suits(legal: list[int]) -> list[int]:
    """The suits of the meld actions in ``legal``."""
    return [a - MELD for a in legal if MELD <= a < MELD + 4]
