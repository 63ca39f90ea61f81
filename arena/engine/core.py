"""The rules core: one hand of Sixty-Six on ints and card bitmasks (docs/rules.md R3-R13).

``Hand`` is the checked string layer over a ``Core`` (the public API of the engine). Search
bots use a ``Core`` directly, through this fast interface, and nothing else of the engine's
insides::

    from arena.engine.core import ACTION_NAMES, DECLARE, Core

    world = Core.from_view(view, opponent_cards, stock, rules)  # card ints; trusted
    world.legal            # legal int actions of world.to_move, canonical order; [] when over
    world.legal_mask       # the same as a bitmask over action ints (bit ``a`` when ``a`` is legal)
    child = world.copy()   # an independent copy
    child.apply(a)         # UNCHECKED: ``a`` must be in ``legal``; forced single actions follow
    child.total(seat)      # the seat's R9 total now
    child.result           # None, then (winner, game_points, reason); see ``value``, ``hand_result``

Actions are ints: ``0..23`` play that card (``suit * 6 + rank``, see ``cards``), then
``DECLARE``, ``CLOSE``, ``DRAW``, ``MELD + s`` (meld suit ``s``), ``EXCHANGE``, ``PASS``;
``ACTION_NAMES[a]`` is the action's string and ``ACTION_INDEX`` the inverse. ``legal`` makes
a new list at each call; ``legal_mask`` is the state itself. Search copies a state before
each move (copy-make: a copy costs about as much as one move, so there is no undo).

The state is public for search: ``hands`` (a bitmask per seat), ``stock`` (the up-card at
index 0, ``pop()`` draws; emptied by a close, whose cards go to ``dead``), ``trump``,
``phase``, ``to_move`` (meaningful while ``result`` is None), ``lead`` (-1 when none),
``trick_points``, ``tricks_won``, ``marriage_points``, ``totals`` (the R9 totals, kept up to
date; ``total`` reads them), ``closed``, ``closer`` and the public knowledge a seat's policy
may use: ``played`` (every card played), ``shown`` (per seat, cards
it has shown: a marriage, the card taken by the exchange, the up-card drawn last; those it
still holds, ``shown[seat] & hands[seat]``, are the ones its opponent knows it holds) and
``absent`` (per seat, cards it has shown it cannot hold: voids and failures to head revealed
by strict follows, and the up-card turned down by a close).

A core made with ``log=True`` (every ``Hand``'s) also keeps the event log the views are made
of; search states keep none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import IntEnum
from itertools import product
from typing import Any

from .cards import (
    CARD_BIT, CARD_INDEX, CARD_NAMES, CARD_POINTS, CARD_SUIT, HIGH_CARDS, KING, LOW_CARDS, NINE, QUEEN, SUITS, cards_of,
)
from .result import HandResult, Reason
from .rules import Rules
from .scoring import Outcome, declaration_outcome, marriage_value, played_out_outcome, seat_total
from .tricks import WINNING_FOLLOWS, revealed_by_follow, strict_follows


class Phase(IntEnum):
    """Where a hand stands (docs/rules.md R5)."""

    LEAD = 0
    FOLLOW = 1
    PRE_DRAW = 2
    FINAL = 3
    OVER = 4


# The commonest actions come first after the cards, so that most legal masks (a bit per
# action) stay below 2**30, where Python's int operations are fastest.
DECLARE, CLOSE, DRAW, MELD, EXCHANGE, PASS = 24, 25, 26, 27, 31, 32  # MELD + suit for a marriage
ACTION_NAMES: tuple[str, ...] = (
    *("play " + name for name in CARD_NAMES),
    "declare", "close", "draw", *("meld " + suit for suit in SUITS), "exchange", "pass",
)
ACTION_INDEX: dict[str, int] = {name: a for a, name in enumerate(ACTION_NAMES)}
ACTION_BITS: tuple[int, ...] = tuple(1 << a for a in range(len(ACTION_NAMES)))
"""``1 << a`` by action: action ``a``'s bit in ``legal_mask``."""

LEAD, FOLLOW, PRE_DRAW, FINAL, OVER = Phase

# Lead steps (R5.3): what has already happened on the current lead.
STEP_NONE, STEP_EXCHANGED, STEP_CLOSED, STEP_MELDED = range(4)

# The legal set is a bitmask over action ints: bit ``a`` for action ``a``. Cards come first
# in canonical order; the other actions' canonical order is this one:
_SPECIAL_ORDER = (EXCHANGE, CLOSE, DRAW, MELD, MELD + 1, MELD + 2, MELD + 3, DECLARE, PASS)
SPECIAL_ACTIONS: tuple[list[int], ...] = tuple(
    [a for a in _SPECIAL_ORDER if bits >> (a - 24) & 1] for bits in range(1 << 9))
"""The canonical list of the non-card actions in ``legal_mask >> 24``."""
_EXCHANGE_BIT, _CLOSE_BIT, _DECLARE_BIT, _PASS_BIT = 1 << EXCHANGE, 1 << CLOSE, 1 << DECLARE, 1 << PASS
_CLOSE_OR_DRAW = _CLOSE_BIT | 1 << DRAW
_DEFAULT_RULES = Rules()

# The same bits shifted down by 24, for the lead's non-card actions.
_EXCHANGE_SPECIAL, _CLOSE_SPECIAL, _DECLARE_SPECIAL = _EXCHANGE_BIT >> 24, _CLOSE_BIT >> 24, _DECLARE_BIT >> 24
_MARRIAGES = tuple(CARD_BIT[suit * 6 + KING] | CARD_BIT[suit * 6 + QUEEN] for suit in range(4))
_KINGS_AND_QUEENS = sum(_MARRIAGES)
_MELDS_OF_HAND: dict[int, int] = {
    sum(held): sum(1 << (MELD - 24 + suit) for suit in range(4) if held[suit] == _MARRIAGES[suit])
    for held in product(*((0, CARD_BIT[suit * 6 + KING], CARD_BIT[suit * 6 + QUEEN], _MARRIAGES[suit])
                          for suit in range(4)))
}
"""The meld actions (bits of ``legal_mask >> 24``) of a hand, by the kings and queens in it."""

Event = tuple[Any, ...]
"""One logged event: ``("play", seat, card)`` for a lead, ``("play", seat, card, winner)`` for
a follow, ``("draw", seat, card, public)`` (``card`` None when a view did not show it),
``("meld", seat, suit, value)``, ``("exchange", seat, nine, up_card)``, ``("close", seat,
trick_number)``, ``("declare", seat, total)``, ``("pass", seat)`` and ``("end", winner,
game_points, reason)``."""


class Core:
    """One hand of Sixty-Six with every card known; ``apply`` trusts its argument."""

    __slots__ = (
        "rules", "trump", "hands", "stock", "dead", "closed", "closer", "opp_tricks_at_close",
        "trick_points", "tricks_won", "marriage_points", "bonus_seat", "totals", "to_move", "phase", "lead",
        "step", "closing_lead", "pending_meld", "played", "shown", "absent",
        "result", "legal_mask", "log",
    )

    rules: Rules
    trump: int
    hands: list[int]
    stock: list[int]
    dead: list[int]
    closed: bool
    closer: int
    opp_tricks_at_close: int
    trick_points: list[int]
    tricks_won: list[int]
    marriage_points: list[int]
    bonus_seat: int
    totals: list[int]
    """Each seat's R9 total, kept up to date by every state change (``total`` reads it)."""
    to_move: int
    phase: Phase
    lead: int
    step: int
    closing_lead: bool
    pending_meld: int
    played: int
    shown: list[int]
    absent: list[int]
    result: Outcome | None
    legal_mask: int
    """The legal actions as a bitmask over action ints (bit ``a`` set when ``a`` is legal)."""
    log: list[Event] | None

    # ----------------------------------------------------------------- construction

    @classmethod
    def deal(cls, deck: Sequence[int], dealer: int, rules: Rules | None = None, *, log: bool = False) -> Core:
        """Deal ``deck`` (24 distinct card ints in order c0..c23) as docs/rules.md R3.2 says."""
        core = cls.__new__(cls)
        core.rules = rules if rules is not None else _DEFAULT_RULES
        core.trump = CARD_SUIT[deck[12]]
        d = deck
        bit = CARD_BIT
        first = bit[d[0]] | bit[d[1]] | bit[d[2]] | bit[d[6]] | bit[d[7]] | bit[d[8]]  # the non-dealer's
        second = bit[d[3]] | bit[d[4]] | bit[d[5]] | bit[d[9]] | bit[d[10]] | bit[d[11]]
        core.hands = [second, first] if dealer == 0 else [first, second]
        core.stock = [deck[12], *deck[23:12:-1]]  # pop() draws c13 first; the up-card c12 last
        core._reset(1 - dealer, log)
        core._settle()
        return core

    @classmethod
    def from_view(cls, view: dict[str, Any], opponent_cards: list[int], stock: list[int],
                  rules: Rules | None = None, absent: tuple[int, int] = (0, 0), *, log: bool = False) -> Core:
        """The full hand consistent with ``view`` (one seat's view) if the guesses are right.

        ``opponent_cards`` are the opponent's cards; ``stock`` the face-down stock cards in
        draw order (the up-card stays where the view says; once closed, ``stock`` may name the
        dead cards or be empty); ``absent`` the seats' publicly absent cards, if known. The
        caller guarantees consistency (``Hand.from_view`` checks it).
        """
        core = cls.__new__(cls)
        core.rules = rules if rules is not None else _DEFAULT_RULES
        seat = view["seat"]
        core.trump = SUITS.index(view["trump"])
        own = 0
        for name in view["hand"]:
            own |= 1 << CARD_INDEX[name]
        theirs = 0
        for c in opponent_cards:
            theirs |= 1 << c
        hands = [0, 0]
        hands[seat], hands[1 - seat] = own, theirs
        core.hands = hands
        up = view["up_card"]
        closed = view["closed"]
        core.stock = [] if closed else ([CARD_INDEX[up]] if up is not None else []) + stock[::-1]
        core._reset(view["to_move"] if view["to_move"] is not None else seat, log)
        core.dead = stock[::-1] if closed else []
        core.absent = list(absent)
        core._read_events(view)
        core.trick_points = list(view["trick_points"])
        core.tricks_won = list(view["tricks_won"])
        for m in view["marriages"]:
            core.marriage_points[m["seat"]] += m["value"]
        core.lead = CARD_INDEX[view["lead"]] if view["lead"] is not None else -1
        core.pending_meld = SUITS.index(view["pending_meld"]) if view["pending_meld"] is not None else -1
        if closed:
            core.closed = True
            core.closer = closer = view["closer"]
            close = next(e for e in view["events"] if e["type"] == "close")
            before = view["tricks"][: close["trick_number"] - 1]
            core.opp_tricks_at_close = sum(1 for t in before if t["winner"] != closer)
        if len(view["tricks"]) == 12 and not closed:
            core.bonus_seat = view["tricks"][-1]["winner"]
        core.totals = [core.counted_total(0), core.counted_total(1)]
        result = view["result"]
        if result is not None:
            core.result = (result["winner"], result["game_points"], Reason(result["reason"]))
            core.phase = OVER
        elif core.lead >= 0:
            core.phase = FOLLOW
        elif not own and not theirs:
            core.phase = FINAL
        elif core.stock and own.bit_count() < 6:
            core.phase = PRE_DRAW
        core._settle()
        return core

    def _read_events(self, view: dict[str, Any]) -> None:
        """What the view's events tell: played and publicly known cards, the current lead's
        steps and, when logging, the log itself."""
        events = view["events"]
        played = 0
        known = [0, 0]
        last_draw: dict[str, Any] | None = None
        draws = 0
        this_lead: set[str] = set()
        for e in events:
            kind = e["type"]
            if kind == "play":
                played |= 1 << CARD_INDEX[e["card"]]
                this_lead.clear()
            elif kind == "meld":
                suit = SUITS.index(e["suit"])
                known[e["seat"]] |= (1 << (suit * 6 + KING)) | (1 << (suit * 6 + QUEEN))
            elif kind == "exchange":
                known[e["seat"]] |= 1 << CARD_INDEX[e["took"]]
            elif kind == "draw":
                draws += 1
                last_draw = e
            this_lead.add(kind)
        if draws == 12 and last_draw is not None and last_draw["card"] is not None:
            known[last_draw["seat"]] |= 1 << CARD_INDEX[last_draw["card"]]  # the up-card, drawn face up
        self.played = played
        self.shown = [known[0] & self.hands[0], known[1] & self.hands[1]]
        self.closing_lead = "close" in this_lead
        if "meld" in this_lead:
            self.step = STEP_MELDED
        elif "close" in this_lead:
            self.step = STEP_CLOSED
        elif "exchange" in this_lead:
            self.step = STEP_EXCHANGED
        if self.log is not None:
            self.log = _logged_events(view)

    def _reset(self, leader: int, log: bool) -> None:
        """Everything but the cards, stock and trump: the state at the first lead."""
        self.to_move, self.phase, self.legal_mask = leader, LEAD, 0  # the turn
        self.lead, self.step, self.pending_meld = -1, STEP_NONE, -1
        self.trick_points, self.tricks_won, self.marriage_points = [0, 0], [0, 0], [0, 0]  # scores
        self.bonus_seat, self.totals, self.result = -1, [0, 0], None
        self.closed, self.closer, self.opp_tricks_at_close = False, -1, 0  # the close
        self.closing_lead, self.dead = False, []
        self.played, self.shown, self.absent = 0, [0, 0], [0, 0]  # public knowledge
        self.log = [] if log else None

    def copy(self) -> Core:
        """An independent copy (its log too, if it keeps one)."""
        new = Core.__new__(Core)
        new.rules, new.trump, new.result = self.rules, self.trump, self.result
        new.hands, new.stock, new.dead = self.hands[:], self.stock[:], self.dead  # dead is never changed
        new.to_move, new.phase, new.legal_mask = self.to_move, self.phase, self.legal_mask
        new.lead, new.step, new.pending_meld = self.lead, self.step, self.pending_meld
        new.trick_points, new.tricks_won = self.trick_points[:], self.tricks_won[:]
        new.marriage_points, new.bonus_seat, new.totals = self.marriage_points[:], self.bonus_seat, self.totals[:]
        new.closed, new.closer, new.opp_tricks_at_close = self.closed, self.closer, self.opp_tricks_at_close
        new.closing_lead, new.played = self.closing_lead, self.played
        new.shown, new.absent = self.shown[:], self.absent[:]
        log = self.log
        new.log = None if log is None else log[:]
        return new

    # ----------------------------------------------------------------- queries

    @property
    def trick_number(self) -> int:
        """The 1-based number of the trick being played (13 once all twelve are done)."""
        tricks_won = self.tricks_won
        return tricks_won[0] + tricks_won[1] + 1

    def total(self, seat: int) -> int:
        """The seat's R9 total now: tricks, valid marriages and the last-trick bonus."""
        return self.totals[seat]

    def counted_total(self, seat: int) -> int:
        """``total(seat)`` counted from the scores (what ``totals`` keeps up to date)."""
        points = seat_total(self.trick_points[seat], self.tricks_won[seat], self.marriage_points[seat])
        if self.bonus_seat == seat:
            points += self.rules.last_trick_bonus
        return points

    def value(self, seat: int) -> int:
        """Game points won by ``seat`` (negative when lost, 0 for a tie); the hand must be over."""
        result = self.result
        assert result is not None
        winner = result[0]
        if winner is None:
            return 0
        return result[1] if winner == seat else -result[1]

    def hand_result(self) -> HandResult:
        """The HandResult of a finished hand."""
        result = self.result
        assert result is not None
        return HandResult(winner=result[0], game_points=result[1], reason=result[2],
                          totals=(self.total(0), self.total(1)), tricks=(self.tricks_won[0], self.tricks_won[1]))

    def __repr__(self) -> str:
        state = "over" if self.result is not None else f"{self.phase.name.lower()} seat {self.to_move}"
        hands = "/".join(" ".join(CARD_NAMES[c] for c in cards_of(h)) for h in self.hands)
        return f"<Core trump={SUITS[self.trump]} trick={self.trick_number} {state} hands={hands}>"

    # ----------------------------------------------------------------- state changes

    def apply(self, a: int) -> None:
        """Apply action ``a`` for ``to_move`` (unchecked), then any forced single actions."""
        _DO[a](self, a)
        self._settle()

    def _play(self, c: int) -> None:
        seat = self.to_move
        b = CARD_BIT[c]
        hands = self.hands
        hands[seat] ^= b
        self.played |= b
        log = self.log
        if self.phase is LEAD:
            if log is not None:
                log.append(("play", seat, c))
            self.lead = c
            self.phase = FOLLOW
            self.to_move = 1 - seat
            if self.step:  # an exchange, close or marriage happened on this lead
                self.step = STEP_NONE
                self.closing_lead = False
                self.pending_meld = -1
            return
        # Follow: resolve the trick (R6.4, R6.5); a strict follow shows what the seat lacks.
        lead = self.lead
        winner = seat if WINNING_FOLLOWS[self.trump][lead] >> c & 1 else 1 - seat
        stock = self.stock
        if not stock:
            self.absent[seat] |= revealed_by_follow(self.rules, lead, c, self.trump)
        points = CARD_POINTS[lead] + CARD_POINTS[c]
        self.trick_points[winner] += points
        tricks_won = self.tricks_won
        if not tricks_won[winner]:  # the seat's first trick makes its marriages count (R9)
            points += self.marriage_points[winner]
        tricks_won[winner] += 1
        self.totals[winner] += points
        if log is not None:
            log.append(("play", seat, c, winner))
        self.lead = -1
        self.to_move = winner
        if not hands[winner]:
            if not self.closed:
                self.bonus_seat = winner
                self.totals[winner] += self.rules.last_trick_bonus
            self.phase = FINAL
        elif stock:
            rules = self.rules
            if rules.allow_close_before_draw and (len(stock) >= 4 or rules.allow_close_before_final_draw):
                self.phase = PRE_DRAW
            else:
                self._draw()
        else:
            self.phase = LEAD

    def _draw(self, a: int = DRAW) -> None:
        winner = self.to_move
        loser = 1 - winner
        stock = self.stock
        first = stock.pop()
        second = stock.pop()
        self.hands[winner] |= CARD_BIT[first]
        self.hands[loser] |= CARD_BIT[second]
        last = not stock
        if last:  # the loser of trick 6 takes the (current) up-card, face up (R7.2, R7.4)
            self.shown[loser] |= CARD_BIT[second]
        log = self.log
        if log is not None:
            log.append(("draw", winner, first, False))
            log.append(("draw", loser, second, last))
        self.phase = LEAD

    def _meld(self, a: int) -> None:
        suit = a - MELD
        seat = self.to_move
        value = marriage_value(suit, self.trump)
        self.marriage_points[seat] += value
        if self.tricks_won[seat]:
            self.totals[seat] += value
        self.shown[seat] |= (1 << (suit * 6 + KING)) | (1 << (suit * 6 + QUEEN))
        self.pending_meld = suit
        self.step = STEP_MELDED
        if self.log is not None:
            self.log.append(("meld", seat, suit, value))

    def _exchange(self, a: int) -> None:
        seat = self.to_move
        nine = self.trump * 6 + NINE
        old_up = self.stock[0]
        self.hands[seat] ^= (1 << nine) | (1 << old_up)
        self.stock[0] = nine
        self.shown[seat] |= 1 << old_up
        self.step = STEP_EXCHANGED
        if self.log is not None:
            self.log.append(("exchange", seat, nine, old_up))

    def _close(self, a: int) -> None:
        seat = self.to_move
        self.closed = True
        self.closer = seat
        self.opp_tricks_at_close = self.tricks_won[1 - seat]
        dead_up = 1 << self.stock[0]
        self.absent[0] |= dead_up
        self.absent[1] |= dead_up
        self.dead = self.stock
        self.stock = []
        self.phase = LEAD
        self.step = STEP_CLOSED
        self.closing_lead = True
        if self.log is not None:
            self.log.append(("close", seat, self.trick_number))

    def _declare(self, a: int = DECLARE) -> None:
        seat = self.to_move
        if self.log is not None:
            self.log.append(("declare", seat, self.totals[seat]))
        self._finish(*declaration_outcome(self.rules, seat, self.totals, self.tricks_won, self.marriage_points,
                                          self.closer, self.opp_tricks_at_close))

    def _pass(self, a: int) -> None:
        if self.log is not None:
            self.log.append(("pass", self.to_move))
        self._finish(*played_out_outcome(self.rules, self.totals, self.tricks_won, self.marriage_points,
                                         self.closer, self.opp_tricks_at_close))

    def _finish(self, winner: int | None, game_points: int, reason: Reason) -> None:
        self.result = (winner, game_points, reason)
        self.phase = OVER
        if self.log is not None:
            self.log.append(("end", winner, game_points, reason))

    # ----------------------------------------------------------------- legal actions

    @property
    def legal(self) -> list[int]:
        """The legal actions of ``to_move`` in canonical order (a new list); [] when over."""
        m = self.legal_mask
        return SPECIAL_ACTIONS[m >> 24] + LOW_CARDS[m & 4095] + HIGH_CARDS[m >> 12 & 4095]

    def _settle(self) -> None:
        """Recompute ``legal_mask``, applying forced single actions and auto-declares (R5.1, R12.5)."""
        while True:
            phase = self.phase
            if phase is FOLLOW:
                legal = self.hands[self.to_move]  # Phase A: any card (R6.2)
                if not self.stock:  # Phase B (R6.3)
                    legal = strict_follows(self.rules, legal, self.lead, self.trump)
            elif phase is LEAD:
                if self.rules.auto_declare and self.totals[self.to_move] >= 66:
                    self._declare()
                    continue
                legal = self._lead_actions()
            elif phase is PRE_DRAW:
                legal = _CLOSE_OR_DRAW
            elif phase is FINAL:
                if self.rules.auto_declare:
                    legal = _DECLARE_BIT if self.totals[self.to_move] >= 66 else _PASS_BIT
                else:
                    legal = _DECLARE_BIT | _PASS_BIT if self._declare_offered() else _PASS_BIT
            else:
                self.legal_mask = 0
                return
            if legal & (legal - 1):  # two actions or more
                self.legal_mask = legal
                return
            a = legal.bit_length() - 1
            _DO[a](self, a)

    def _declare_offered(self) -> bool:
        rules = self.rules
        if rules.auto_declare:
            return False
        return not rules.reject_false_declaration or self.totals[self.to_move] >= 66

    def _lead_actions(self) -> int:
        seat = self.to_move
        hand = self.hands[seat]
        rules = self.rules
        step = self.step
        stock = self.stock
        special = 0  # the non-card actions, as bits of ``legal_mask >> 24`` (small ints are cheap)
        if stock:  # Phase A: the stock is open (a closed stock is emptied) and not exhausted
            if step == STEP_MELDED:
                return self._after_meld()
            n_stock = len(stock)
            tricks_won = self.tricks_won
            if step == STEP_NONE and tricks_won[seat] and n_stock >= rules.exchange_min_stock:
                if hand >> (self.trump * 6 + NINE) & 1:
                    special = _EXCHANGE_SPECIAL
            if step <= STEP_EXCHANGED and n_stock >= rules.close_min_stock_after_draw:
                if rules.allow_close_before_first_trick or tricks_won[0] or tricks_won[1]:
                    special |= _CLOSE_SPECIAL
            in_phase = True  # marriages are shown in Phase A (R10.3) ...
        elif step == STEP_MELDED:
            return self._after_meld()
        else:  # ... and in Phase B only where the rules allow it (R10.3, R11.6)
            in_phase = rules.marriages_in_phase_b or (self.closing_lead and rules.marriage_on_closing_lead)
        if in_phase and (self.tricks_won[seat] or rules.marriage_on_first_lead):
            special |= _MELDS_OF_HAND[hand & _KINGS_AND_QUEENS]
        if not rules.auto_declare and (not rules.reject_false_declaration or self.totals[seat] >= 66):
            special |= _DECLARE_SPECIAL
        return hand | special << 24 if special else hand

    def _after_meld(self) -> int:
        """A marriage was announced on this lead: play its king or queen, or declare."""
        legal = 3 << (self.pending_meld * 6 + KING)
        return legal | _DECLARE_BIT if self._declare_offered() else legal


_DO: tuple[Callable[[Core, int], None], ...] = (
    (Core._play,) * 24 + (Core._declare, Core._close, Core._draw) + (Core._meld,) * 4 + (Core._exchange, Core._pass))
"""The state change of each action int (in action order)."""


def _logged_events(view: dict[str, Any]) -> list[Event]:
    """The log that the view's events come from (cards the view hides as None)."""
    seat = view["seat"]
    winners = iter([t["winner"] for t in view["tricks"]])
    leading = True
    log: list[Event] = []
    for e in view["events"]:
        kind, who = e["type"], e["seat"]
        if kind == "play":
            c = CARD_INDEX[e["card"]]
            log.append(("play", who, c) if leading else ("play", who, c, next(winners)))
            leading = not leading
        elif kind == "draw":
            drawn = e["card"]
            shown = drawn is not None and who != seat  # an opponent's draw shown is public
            log.append(("draw", who, None if drawn is None else CARD_INDEX[drawn], shown))
        elif kind == "meld":
            log.append(("meld", who, SUITS.index(e["suit"]), e["value"]))
        elif kind == "exchange":
            log.append(("exchange", who, CARD_INDEX[e["gave"]], CARD_INDEX[e["took"]]))
        elif kind == "close":
            log.append(("close", who, e["trick_number"]))
        elif kind == "declare":
            log.append(("declare", who, e["total"]))
        elif kind == "pass":
            log.append(("pass", who))
        else:
            log.append(("end", who, e["game_points"], Reason(e["reason"])))
    return log


__all__ = [
    "ACTION_BITS", "ACTION_INDEX", "ACTION_NAMES", "CLOSE", "DECLARE", "DRAW", "EXCHANGE", "FINAL", "FOLLOW", "LEAD",
    "MELD", "OVER", "PASS", "PRE_DRAW", "STEP_CLOSED", "STEP_EXCHANGED", "STEP_MELDED", "STEP_NONE",
    "SPECIAL_ACTIONS", "Core", "Event", "Phase",
]
