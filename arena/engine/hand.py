"""One hand (deal) of Sixty-Six as a state machine: docs/rules.md R3-R13.

``Hand.apply`` is the one checked door: it looks the action up in the cached legal list,
then one ``_do_<kind>`` per action kind changes the state, and ``_settle`` applies forced
single actions (R5.1) and recomputes the legal list. Cards are ints (see ``cards``).
"""

from __future__ import annotations

import random
from bisect import insort
from enum import IntEnum
from typing import Any

from .cards import CARD_NAMES, CARD_POINTS, CARD_SUIT, KING, NINE, QUEEN, SUITS, card, parse_deck
from .errors import IllegalAction, MalformedAction
from .result import HandResult, Reason
from .rules import Rules


class Phase(IntEnum):
    """Where a hand stands (docs/rules.md R5)."""

    LEAD = 0
    FOLLOW = 1
    PRE_DRAW = 2
    FINAL = 3
    OVER = 4


_LEAD, _FOLLOW, _PRE_DRAW, _FINAL, _OVER = Phase

# Lead steps (R5.3): what has already happened on the current lead.
_STEP_NONE, _STEP_EXCHANGED, _STEP_CLOSED, _STEP_MELDED = range(4)

# Action kinds and the table from every action string to (kind, argument).
_PLAY, _MELD, _EXCHANGE, _CLOSE, _DRAW, _DECLARE, _PASS = range(7)
PLAY_ACTIONS: tuple[str, ...] = tuple("play " + name for name in CARD_NAMES)
MELD_ACTIONS: tuple[str, ...] = tuple("meld " + suit for suit in SUITS)
_ACTIONS: dict[str, tuple[int, int]] = {
    **{action: (_PLAY, i) for i, action in enumerate(PLAY_ACTIONS)},
    **{action: (_MELD, s) for s, action in enumerate(MELD_ACTIONS)},
    "exchange": (_EXCHANGE, 0),
    "close": (_CLOSE, 0),
    "draw": (_DRAW, 0),
    "declare": (_DECLARE, 0),
    "pass": (_PASS, 0),
}
_FINAL_ACTIONS = ["declare", "pass"]
_DEFAULT_RULES = Rules()
_KINGS = frozenset(card(suit, KING) for suit in range(4))
_TRUMP_NINES = tuple(card(suit, NINE) for suit in range(4))
_PRE_DRAW_ACTIONS = ["close", "draw"]

# The most decisions one hand can ask of the two seats together: 24 card plays, 4 melds,
# 1 exchange, 1 close, 5 pre-draw choices, 1 final choice.
MAX_DECISIONS_PER_HAND = 36
GAME_POINTS_RANGE = (0, 3)


class Hand:
    """One hand of Sixty-Six, from the deal to the result (docs/architecture.md#engine-api)."""

    __slots__ = (
        "rules", "deck", "dealer", "trump", "to_move",
        "_cards", "_stock", "_dead", "_known",
        "_phase", "_to_move", "_lead", "_step", "_closing_lead", "_pending_meld",
        "_closed", "_closer", "_opp_tricks_at_close",
        "_trick_number", "_trick_points", "_tricks_won", "_marriage_points", "_marriages",
        "_tricks", "_events", "_actions", "_legal", "_bonus_seat", "_result",
    )

    rules: Rules
    deck: tuple[str, ...]
    dealer: int
    trump: int
    to_move: int | None
    """The seat that must act (it always has >= 2 legal actions), or None when over."""
    _cards: list[list[int]]
    _stock: list[int]
    _dead: list[int]
    _known: list[set[int]]
    _phase: Phase
    _to_move: int
    _lead: int
    _step: int
    _closing_lead: bool
    _pending_meld: int
    _closed: bool
    _closer: int
    _opp_tricks_at_close: int
    _trick_number: int
    _trick_points: list[int]
    _tricks_won: list[int]
    _marriage_points: list[int]
    _marriages: list[tuple[int, int, int]]
    _tricks: list[tuple[int, int, int, int]]
    _events: list[tuple[Any, ...]]
    _actions: list[str]
    _legal: list[str]
    _bonus_seat: int
    _result: HandResult | None

    # ----------------------------------------------------------------- construction

    @classmethod
    def deal(cls, deck: list[str] | tuple[str, ...], dealer: int = 0, rules: Rules | None = None) -> Hand:
        """Deal ``deck`` (24 card names in order c0..c23) as docs/rules.md R3.2 says."""
        if dealer not in (0, 1) or isinstance(dealer, bool):
            raise ValueError(f"dealer must be 0 or 1, not {dealer!r}")
        c = parse_deck(deck)
        hand = cls.__new__(cls)
        hand.rules = rules if rules is not None else _DEFAULT_RULES
        hand.deck = tuple(deck)
        hand.dealer = dealer
        non_dealer = 1 - dealer
        cards: list[list[int]] = [[], []]
        cards[non_dealer] = sorted(c[0:3] + c[6:9])
        cards[dealer] = sorted(c[3:6] + c[9:12])
        hand._cards = cards
        # Stored so that pop() draws c13 first; the up-card c12 sits at index 0, drawn last.
        hand._stock = [c[12]] + c[23:12:-1]
        hand.trump = CARD_SUIT[c[12]]
        hand._init_play_state(non_dealer)
        hand._settle()
        return hand

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
        cards or be empty). ``rules`` defaults to the default profile.
        """
        from .view import hand_from_view

        return hand_from_view(cls.__new__(cls), view, opponent_cards, stock, rules or _DEFAULT_RULES)

    def _init_play_state(self, leader: int) -> None:
        """Reset everything but the cards, stock and trump: the state at the first lead."""
        self._dead = []
        self._known = [set(), set()]
        self._phase = _LEAD
        self._to_move = leader
        self.to_move = leader
        self._lead = -1
        self._step = _STEP_NONE
        self._closing_lead = False
        self._pending_meld = -1
        self._closed = False
        self._closer = -1
        self._opp_tricks_at_close = 0
        self._trick_number = 1
        self._trick_points = [0, 0]
        self._tricks_won = [0, 0]
        self._marriage_points = [0, 0]
        self._marriages = []
        self._tricks = []
        self._events = []
        self._actions = []
        self._legal = []
        self._bonus_seat = -1
        self._result = None

    def copy(self) -> Hand:
        """An independent copy (fields copied one by one; cheap enough for search)."""
        new = Hand.__new__(Hand)
        new.rules = self.rules
        new.deck = self.deck
        new.dealer = self.dealer
        new.trump = self.trump
        new.to_move = self.to_move
        new._cards = [self._cards[0][:], self._cards[1][:]]
        new._stock = self._stock[:]
        new._dead = self._dead
        new._known = [set(self._known[0]), set(self._known[1])]
        new._phase = self._phase
        new._to_move = self._to_move
        new._lead = self._lead
        new._step = self._step
        new._closing_lead = self._closing_lead
        new._pending_meld = self._pending_meld
        new._closed = self._closed
        new._closer = self._closer
        new._opp_tricks_at_close = self._opp_tricks_at_close
        new._trick_number = self._trick_number
        new._trick_points = self._trick_points[:]
        new._tricks_won = self._tricks_won[:]
        new._marriage_points = self._marriage_points[:]
        new._marriages = self._marriages[:]
        new._tricks = self._tricks[:]
        new._events = self._events[:]
        new._actions = self._actions[:]
        new._legal = self._legal
        new._bonus_seat = self._bonus_seat
        new._result = self._result
        return new

    # ----------------------------------------------------------------- queries

    @property
    def is_over(self) -> bool:
        """Whether the hand has ended."""
        return self._result is not None

    @property
    def result(self) -> HandResult | None:
        """None until the hand is over, then its HandResult."""
        return self._result

    def legal_actions(self) -> list[str]:
        """The legal actions of ``to_move`` in canonical order; [] when over."""
        return self._legal[:]

    def total(self, seat: int) -> int:
        """The seat's R9 total now: tricks, valid marriages and the last-trick bonus."""
        points = self._trick_points[seat]
        if self._tricks_won[seat]:
            points += self._marriage_points[seat]
        if self._bonus_seat == seat:
            points += self.rules.last_trick_bonus
        return points

    def view(self, seat: int) -> dict[str, Any]:
        """Everything ``seat`` may know now (docs/rules.md R15), as a JSON-ready dict."""
        from .view import hand_view

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
        state = "over" if self._result else f"{self._phase.name.lower()} seat {self._to_move}"
        return f"<Hand trump={SUITS[self.trump]} trick={self._trick_number} {state}>"

    # ----------------------------------------------------------------- the checked door

    def apply(self, action: str) -> None:
        """Apply ``action`` for ``to_move``; IllegalAction (state unchanged) if it is not legal."""
        if action not in self._legal:
            raise self._illegal(action)
        self._actions.append(action)
        kind, arg = _ACTIONS[action]
        if kind == _PLAY:
            self._do_play(arg)
        else:
            self._do(action)
        self._settle()

    def _illegal(self, action: object) -> IllegalAction:
        """The error for an action that is not in the legal list, saying why."""
        if not isinstance(action, str) or action not in _ACTIONS:
            return MalformedAction(f"{action!r} is not an action; actions look like 'play AH', "
                                   f"'meld H', 'exchange', 'close', 'draw', 'declare', 'pass'")
        if self._result is not None:
            return IllegalAction(f"{action!r}: the hand is over")
        kind, arg = _ACTIONS[action]
        seat = self._to_move
        why = "not legal now"
        if kind == _PLAY and arg not in self._cards[seat]:
            why = f"seat {seat} does not hold {CARD_NAMES[arg]}"
        elif kind == _PLAY and self._phase == _FOLLOW:
            why = "the follower must head, follow suit or trump (R6.3)"
        return IllegalAction(f"{action!r} for seat {seat}: {why}; legal: {self._legal}")

    # ----------------------------------------------------------------- state changes

    def _do(self, action: str) -> None:
        kind, arg = _ACTIONS[action]
        if kind == _PLAY:
            self._do_play(arg)
        elif kind == _DRAW:
            self._do_draw()
        elif kind == _MELD:
            self._do_meld(arg)
        elif kind == _DECLARE:
            self._do_declare()
        elif kind == _CLOSE:
            self._do_close()
        elif kind == _EXCHANGE:
            self._do_exchange()
        else:
            self._do_pass()

    def _do_play(self, c: int) -> None:
        seat = self._to_move
        self._cards[seat].remove(c)
        self._known[seat].discard(c)
        self._events.append(("play", seat, c))
        if self._phase is _LEAD:
            self._lead = c
            self._phase = _FOLLOW
            self._to_move = 1 - seat
            self._step = _STEP_NONE
            self._closing_lead = False
            self._pending_meld = -1
            return
        # Follow: resolve the trick (R6.4, R6.5).
        lead = self._lead
        leader = 1 - seat
        if CARD_SUIT[c] == CARD_SUIT[lead]:
            winner = seat if c < lead else leader
        elif CARD_SUIT[c] == self.trump:
            winner = seat
        else:
            winner = leader
        self._trick_points[winner] += CARD_POINTS[lead] + CARD_POINTS[c]
        self._tricks_won[winner] += 1
        self._tricks.append((leader, lead, c, winner))
        self._lead = -1
        self._trick_number += 1
        self._to_move = winner
        stock = self._stock
        if not self._cards[winner]:
            if not self._closed:
                self._bonus_seat = winner
            self._phase = _FINAL
        elif stock:
            rules = self.rules
            if rules.allow_close_before_draw and (len(stock) >= 4 or rules.allow_close_before_final_draw):
                self._phase = _PRE_DRAW
            else:
                self._do_draw()
        else:
            self._phase = _LEAD

    def _do_draw(self) -> None:
        winner = self._to_move
        loser = 1 - winner
        stock = self._stock
        first = stock.pop()
        second = stock.pop()
        insort(self._cards[winner], first)
        insort(self._cards[loser], second)
        self._events.append(("draw", winner, first, False))
        if stock:
            self._events.append(("draw", loser, second, False))
        else:
            # The loser of trick 6 takes the (current) up-card, face up (R7.2, R7.4).
            self._known[loser].add(second)
            self._events.append(("draw", loser, second, True))
        self._phase = _LEAD

    def _do_meld(self, suit: int) -> None:
        seat = self._to_move
        value = 40 if suit == self.trump else 20
        self._marriages.append((seat, suit, value))
        self._marriage_points[seat] += value
        self._known[seat].update((card(suit, KING), card(suit, QUEEN)))
        self._pending_meld = suit
        self._step = _STEP_MELDED
        self._events.append(("meld", seat, suit, value))

    def _do_exchange(self) -> None:
        seat = self._to_move
        nine = card(self.trump, NINE)
        old_up = self._stock[0]
        self._cards[seat].remove(nine)
        insort(self._cards[seat], old_up)
        self._stock[0] = nine
        self._known[seat].add(old_up)
        self._step = _STEP_EXCHANGED
        self._events.append(("exchange", seat, nine, old_up))

    def _do_close(self) -> None:
        seat = self._to_move
        self._closed = True
        self._closer = seat
        self._opp_tricks_at_close = self._tricks_won[1 - seat]
        self._dead = self._stock
        self._stock = []
        self._phase = _LEAD
        self._step = _STEP_CLOSED
        self._closing_lead = True
        self._events.append(("close", seat, self._trick_number))

    def _do_declare(self) -> None:
        seat = self._to_move
        total = self.total(seat)
        self._events.append(("declare", seat, total))
        opponent = 1 - seat
        if total >= 66:
            if not self._closed or seat == self._closer:
                self._finish(seat, self._game_points_against(opponent), Reason.DECLARED)
            else:
                self._finish(seat, self._closer_opponent_out_points(), Reason.CLOSER_OPPONENT_OUT)
        elif seat == self._closer:
            self._finish(opponent, self._failed_close_points(), Reason.FALSE_DECLARATION)
        else:
            self._finish(opponent, self._false_declaration_points(opponent), Reason.FALSE_DECLARATION)

    def _do_pass(self) -> None:
        self._events.append(("pass", self._to_move))
        if self._closed:
            closer = self._closer
            if self.total(closer) >= 66 and not self.rules.closer_must_declare:
                self._finish(closer, self._game_points_against(1 - closer), Reason.PLAYED_OUT)
            else:
                self._finish(1 - closer, self._failed_close_points(), Reason.CLOSE_FAILED)
            return
        t0, t1 = self.total(0), self.total(1)
        if t0 == t1:
            self._finish(None, 0, Reason.TIE)
        else:
            winner = 0 if t0 > t1 else 1
            self._finish(winner, self._game_points_against(1 - winner), Reason.PLAYED_OUT)

    # ----------------------------------------------------------------- scoring (R13)

    def _game_points_against(self, loser: int) -> int:
        """G(loser): 3 if trickless, 2 if under 33, else 1 (R13.0)."""
        if not self._tricks_won[loser]:
            return 3
        total = self.total(loser)
        if not self.rules.schneider_counts_marriages:
            total -= self._marriage_points[loser]
        return 2 if total < 33 else 1

    def _closer_opponent_out_points(self) -> int:
        option = self.rules.closer_opponent_out_points
        if option == "2or3_at_close":
            return 3 if self._opp_tricks_at_close == 0 else 2
        return 2 if option == "flat2" else 3

    def _failed_close_points(self) -> int:
        option = self.rules.failed_close_points
        if option == "2or3_at_close":
            return 3 if self._opp_tricks_at_close == 0 else 2
        if option == "2or3_at_end":
            return 3 if self._tricks_won[1 - self._closer] == 0 else 2
        return 3 if option == "flat3" else 2

    def _false_declaration_points(self, opponent: int) -> int:
        if self.rules.false_declaration_points == "flat2":
            return 2
        return 3 if self._tricks_won[opponent] == 0 else 2

    def _finish(self, winner: int | None, game_points: int, reason: Reason) -> None:
        self._result = HandResult(
            winner=winner,
            game_points=game_points,
            reason=reason,
            totals=(self.total(0), self.total(1)),
            tricks=(self._tricks_won[0], self._tricks_won[1]),
        )
        self._phase = _OVER
        self.to_move = None
        self._events.append(("end", winner, game_points, reason))

    # ----------------------------------------------------------------- legal actions

    def _settle(self) -> None:
        """Recompute the legal list, applying forced single actions and auto-declares (R5.1, R12.5)."""
        while True:
            phase = self._phase
            if phase is _FOLLOW:
                if self._stock:  # Phase A: any card (R6.2)
                    legal = list(map(PLAY_ACTIONS.__getitem__, self._cards[self._to_move]))
                else:
                    legal = self._strict_follow_actions()
            elif phase is _LEAD:
                if self.rules.auto_declare and self.total(self._to_move) >= 66:
                    self._do_declare()
                    continue
                legal = self._lead_actions()
            elif phase is _PRE_DRAW:
                legal = _PRE_DRAW_ACTIONS
            elif phase is _FINAL:
                if self.rules.auto_declare:
                    legal = ["declare" if self.total(self._to_move) >= 66 else "pass"]
                else:
                    legal = _FINAL_ACTIONS if self._declare_offered() else ["pass"]
            else:
                self._legal = []
                return
            if len(legal) > 1:
                self._legal = legal
                self.to_move = self._to_move
                return
            self._do(legal[0])

    def _declare_offered(self) -> bool:
        rules = self.rules
        if rules.auto_declare:
            return False
        return not rules.reject_false_declaration or self.total(self._to_move) >= 66

    def _lead_actions(self) -> list[str]:
        seat = self._to_move
        hand = self._cards[seat]
        rules = self.rules
        step = self._step
        if step == _STEP_MELDED:
            suit = self._pending_meld
            legal = ["declare"] if self._declare_offered() else []
            legal.append(PLAY_ACTIONS[card(suit, KING)])
            legal.append(PLAY_ACTIONS[card(suit, QUEEN)])
            return legal
        legal = []
        stock = self._stock
        if stock:  # Phase A: the stock is open (a closed stock is emptied) and not exhausted
            n_stock = len(stock)
            if step == _STEP_NONE and self._tricks_won[seat] and n_stock >= rules.exchange_min_stock:
                if _TRUMP_NINES[self.trump] in hand:
                    legal.append("exchange")
            if step <= _STEP_EXCHANGED and n_stock >= rules.close_min_stock_after_draw:
                if self._trick_number > 1 or rules.allow_close_before_first_trick:
                    legal.append("close")
            may_meld = self._tricks_won[seat] or rules.marriage_on_first_lead
        else:
            may_meld = (rules.marriages_in_phase_b or (self._closing_lead and rules.marriage_on_closing_lead)) and (
                self._tricks_won[seat] or rules.marriage_on_first_lead
            )
        if may_meld:
            for king in sorted(_KINGS.intersection(hand)):
                if king + 1 in hand:
                    legal.append(MELD_ACTIONS[CARD_SUIT[king]])
        if not rules.auto_declare and (not rules.reject_false_declaration or self.total(seat) >= 66):
            legal.append("declare")
        legal.extend(map(PLAY_ACTIONS.__getitem__, hand))
        return legal

    def _strict_follow_actions(self) -> list[str]:
        """Phase B (R6.3): head, else follow, else trump, else anything."""
        hand = self._cards[self._to_move]
        lead = self._lead
        suit = CARD_SUIT[lead]
        same = [c for c in hand if CARD_SUIT[c] == suit]
        if same:
            if self.rules.must_head:
                higher = [c for c in same if c < lead]
                if higher:
                    return [PLAY_ACTIONS[c] for c in higher]
            return [PLAY_ACTIONS[c] for c in same]
        if self.rules.must_trump_when_void:
            trump = self.trump
            trumps = [c for c in hand if CARD_SUIT[c] == trump]
            if trumps:
                return [PLAY_ACTIONS[c] for c in trumps]
        return [PLAY_ACTIONS[c] for c in hand]



__all__ = ["Hand", "Phase", "MAX_DECISIONS_PER_HAND", "GAME_POINTS_RANGE"]
