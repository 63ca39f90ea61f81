"""A fast perfect-information model of one hand, for search: int actions and card bitmasks.

``Game`` follows ``arena.engine.Hand`` step for step (phases, lead steps, forced single
actions, scoring and every rule option); ``tests/bots/test_model.py`` plays random hands
through both and checks that legal actions, totals and results agree at every step. It has
no events, records or views: only what play and scoring need, plus the public knowledge
(``played``, ``known``) that a policy needs to act from one seat's point of view.

Actions are ints: ``0..23`` play that card, ``24 + s`` meld suit ``s``, then ``EXCHANGE``,
``CLOSE``, ``DRAW``, ``DECLARE``, ``PASS``. ``ACTION_NAMES[a]`` is the engine's string.
"""

from __future__ import annotations

from typing import Any

from arena.engine import Rules

from .cards import CARD_INDEX, CARD_NAMES, CARD_POINTS, CARD_SUIT, KING, NINE, QUEEN, SUIT_MASK, SUITS, cards_of

MELD = 24
EXCHANGE, CLOSE, DRAW, DECLARE, PASS = 28, 29, 30, 31, 32
ACTION_NAMES: tuple[str, ...] = (
    *("play " + name for name in CARD_NAMES),
    *("meld " + s for s in SUITS),
    "exchange", "close", "draw", "declare", "pass",
)
ACTION_INDEX: dict[str, int] = {name: i for i, name in enumerate(ACTION_NAMES)}

LEAD, FOLLOW, PRE_DRAW, FINAL, OVER = range(5)
STEP_NONE, STEP_EXCHANGED, STEP_CLOSED, STEP_MELDED = range(4)

DECLARED, FALSE_DECLARATION, CLOSE_FAILED, CLOSER_OPPONENT_OUT, PLAYED_OUT, TIE = (
    "declared", "false_declaration", "close_failed", "closer_opponent_out", "played_out", "tie")

_PRE_DRAW_ACTIONS = [CLOSE, DRAW]
_FINAL_ACTIONS = [DECLARE, PASS]
_DEFAULT_RULES = Rules()


class Game:
    """One hand with every card known; ``apply`` trusts its argument (search calls it)."""

    __slots__ = (
        "rules", "trump", "hands", "stock", "closed", "closer", "otc", "tp", "tw", "mp",
        "bonus_seat", "to_move", "phase", "lead", "step", "closing_lead", "pending_meld",
        "trick_number", "played", "known", "absent", "result", "legal",
    )

    rules: Rules
    trump: int
    hands: list[int]
    stock: list[int]
    closed: bool
    closer: int
    otc: int
    tp: list[int]
    tw: list[int]
    mp: list[int]
    bonus_seat: int
    to_move: int
    phase: int
    lead: int
    step: int
    closing_lead: bool
    pending_meld: int
    trick_number: int
    played: int
    known: list[int]
    absent: list[int]
    """Per seat, cards it is publicly known not to hold: voids and failures to head shown by
    strict follows, and the up-card turned down by a close."""
    result: tuple[int | None, int, str] | None
    legal: list[int]

    # ----------------------------------------------------------------- construction

    @classmethod
    def deal(cls, deck: list[str], dealer: int = 0, rules: Rules | None = None) -> Game:
        """Deal ``deck`` as ``Hand.deal`` does (docs/rules.md R3.2)."""
        c = [CARD_INDEX[name] for name in deck]
        g = cls.__new__(cls)
        g.rules = rules or _DEFAULT_RULES
        g.trump = CARD_SUIT[c[12]]
        hands = [0, 0]
        for i in (0, 1, 2, 6, 7, 8):
            hands[1 - dealer] |= 1 << c[i]
        for i in (3, 4, 5, 9, 10, 11):
            hands[dealer] |= 1 << c[i]
        g.hands = hands
        g.stock = [c[12]] + c[23:12:-1]
        g._reset(1 - dealer)
        g._settle()
        return g

    @classmethod
    def from_view(cls, view: dict[str, Any], opponent_cards: list[int], stock: list[int],
                  rules: Rules | None = None, absent: tuple[int, int] = (0, 0)) -> Game:
        """The hand that ``Hand.from_view(view, opponent_cards, stock, rules)`` builds, as a Game.

        ``opponent_cards`` are card indices; ``stock`` the hidden stock cards in draw order
        (the dead cards once closed, or empty); ``absent`` the seats' publicly absent cards
        (``knowledge.inferred_absent``). The caller guarantees consistency.
        """
        g = cls.__new__(cls)
        g.rules = rules or _DEFAULT_RULES
        seat = view["seat"]
        opp = 1 - seat
        g.trump = SUITS.index(view["trump"])
        own = 0
        for name in view["hand"]:
            own |= 1 << CARD_INDEX[name]
        theirs = 0
        for c in opponent_cards:
            theirs |= 1 << c
        up = view["up_card"]
        if view["closed"]:
            g.stock = []
        else:
            g.stock = ([CARD_INDEX[up]] if up is not None else []) + list(stock)[::-1]
        hands = [0, 0]
        hands[seat], hands[opp] = own, theirs
        g.hands = hands
        g._reset(view["to_move"] if view["to_move"] is not None else seat)
        events = view["events"]
        played = 0
        known = [0, 0]
        draws = 0
        last_draw: dict[str, Any] | None = None
        for e in events:
            kind = e["type"]
            if kind == "play":
                played |= 1 << CARD_INDEX[e["card"]]
            elif kind == "meld":
                s = SUITS.index(e["suit"])
                known[e["seat"]] |= (1 << (s * 6 + KING)) | (1 << (s * 6 + QUEEN))
            elif kind == "exchange":
                known[e["seat"]] |= 1 << CARD_INDEX[e["took"]]
            elif kind == "draw":
                draws += 1
                last_draw = e
        if draws == 12 and last_draw is not None and last_draw["card"] is not None:
            known[last_draw["seat"]] |= 1 << CARD_INDEX[last_draw["card"]]
        g.played = played
        g.known = [known[0] & hands[0], known[1] & hands[1]]
        g.absent = list(absent)
        g.trick_number = len(view["tricks"]) + 1
        g.tp = list(view["trick_points"])
        g.tw = list(view["tricks_won"])
        mp = [0, 0]
        for m in view["marriages"]:
            mp[m["seat"]] += m["value"]
        g.mp = mp
        g.lead = CARD_INDEX[view["lead"]] if view["lead"] is not None else -1
        g.pending_meld = SUITS.index(view["pending_meld"]) if view["pending_meld"] is not None else -1
        if view["closed"]:
            g.closed = True
            g.closer = closer = view["closer"]
            close = next(e for e in events if e["type"] == "close")
            g.otc = sum(1 for t in view["tricks"][: close["trick_number"] - 1] if t["winner"] != closer)
        last_play = max((i for i, e in enumerate(events) if e["type"] == "play"), default=-1)
        this_lead = [e["type"] for e in events[last_play + 1:]]
        g.closing_lead = "close" in this_lead
        if "meld" in this_lead:
            g.step = STEP_MELDED
        elif "close" in this_lead:
            g.step = STEP_CLOSED
        elif "exchange" in this_lead:
            g.step = STEP_EXCHANGED
        if len(view["tricks"]) == 12 and not g.closed:
            g.bonus_seat = view["tricks"][-1]["winner"]
        result = view["result"]
        if result is not None:
            g.result = (result["winner"], result["game_points"], result["reason"])
            g.phase = OVER
        elif g.lead >= 0:
            g.phase = FOLLOW
        elif not own and not theirs:
            g.phase = FINAL
        elif g.stock and own.bit_count() < 6:
            g.phase = PRE_DRAW
        else:
            g.phase = LEAD
        g._settle()
        return g

    def _reset(self, leader: int) -> None:
        self.closed = False
        self.closer = -1
        self.otc = 0
        self.tp = [0, 0]
        self.tw = [0, 0]
        self.mp = [0, 0]
        self.bonus_seat = -1
        self.to_move = leader
        self.phase = LEAD
        self.lead = -1
        self.step = STEP_NONE
        self.closing_lead = False
        self.pending_meld = -1
        self.trick_number = 1
        self.played = 0
        self.known = [0, 0]
        self.absent = [0, 0]
        self.result = None
        self.legal = []

    def copy(self) -> Game:
        """An independent copy."""
        g = Game.__new__(Game)
        g.rules = self.rules
        g.trump = self.trump
        g.hands = self.hands[:]
        g.stock = self.stock[:]
        g.closed = self.closed
        g.closer = self.closer
        g.otc = self.otc
        g.tp = self.tp[:]
        g.tw = self.tw[:]
        g.mp = self.mp[:]
        g.bonus_seat = self.bonus_seat
        g.to_move = self.to_move
        g.phase = self.phase
        g.lead = self.lead
        g.step = self.step
        g.closing_lead = self.closing_lead
        g.pending_meld = self.pending_meld
        g.trick_number = self.trick_number
        g.played = self.played
        g.known = self.known[:]
        g.absent = self.absent[:]
        g.result = self.result
        g.legal = self.legal
        return g

    # ----------------------------------------------------------------- queries

    def total(self, seat: int) -> int:
        """The seat's R9 total now."""
        points = self.tp[seat]
        if self.tw[seat]:
            points += self.mp[seat]
        if self.bonus_seat == seat:
            points += self.rules.last_trick_bonus
        return points

    def value(self, seat: int) -> int:
        """Game points won by ``seat`` (negative when lost, 0 for a tie); the hand must be over."""
        assert self.result is not None
        winner, points, _ = self.result
        if winner is None:
            return 0
        return points if winner == seat else -points

    @property
    def strict(self) -> bool:
        """Phase B: the stock is closed or exhausted."""
        return not self.stock

    # ----------------------------------------------------------------- play

    def apply(self, a: int) -> None:
        """Apply action ``a`` for ``to_move`` (unchecked), then any forced actions."""
        self._do(a)
        self._settle()

    def _do(self, a: int) -> None:
        if a < 24:
            self._play(a)
        elif a < 28:
            self._meld(a - MELD)
        elif a == DRAW:
            self._draw()
        elif a == DECLARE:
            self._declare()
        elif a == CLOSE:
            self._close()
        elif a == EXCHANGE:
            self._exchange()
        else:
            self._pass()

    def _play(self, c: int) -> None:
        seat = self.to_move
        b = 1 << c
        self.hands[seat] &= ~b
        self.known[seat] &= ~b
        self.played |= b
        if self.phase == LEAD:
            self.lead = c
            self.phase = FOLLOW
            self.to_move = 1 - seat
            self.step = STEP_NONE
            self.closing_lead = False
            self.pending_meld = -1
            return
        lead = self.lead
        leader = 1 - seat
        suit = CARD_SUIT[lead]
        if CARD_SUIT[c] == suit:
            winner = seat if c < lead else leader
            if c > lead and not self.stock and self.rules.must_head:
                self.absent[seat] |= SUIT_MASK[suit] & ((1 << lead) - 1)
        else:
            winner = seat if CARD_SUIT[c] == self.trump else leader
            if not self.stock:
                self.absent[seat] |= SUIT_MASK[suit]
                if winner == leader and self.rules.must_trump_when_void:
                    self.absent[seat] |= SUIT_MASK[self.trump]
        self.tp[winner] += CARD_POINTS[lead] + CARD_POINTS[c]
        self.tw[winner] += 1
        self.lead = -1
        self.trick_number += 1
        self.to_move = winner
        stock = self.stock
        if not self.hands[winner]:
            if not self.closed:
                self.bonus_seat = winner
            self.phase = FINAL
        elif stock:
            rules = self.rules
            if rules.allow_close_before_draw and (len(stock) >= 4 or rules.allow_close_before_final_draw):
                self.phase = PRE_DRAW
            else:
                self._draw()
        else:
            self.phase = LEAD

    def _draw(self) -> None:
        winner = self.to_move
        loser = 1 - winner
        stock = self.stock
        self.hands[winner] |= 1 << stock.pop()
        second = stock.pop()
        self.hands[loser] |= 1 << second
        if not stock:
            self.known[loser] |= 1 << second
        self.phase = LEAD

    def _meld(self, suit: int) -> None:
        seat = self.to_move
        self.mp[seat] += 40 if suit == self.trump else 20
        self.known[seat] |= (1 << (suit * 6 + KING)) | (1 << (suit * 6 + QUEEN))
        self.pending_meld = suit
        self.step = STEP_MELDED

    def _exchange(self) -> None:
        seat = self.to_move
        nine = self.trump * 6 + NINE
        old_up = self.stock[0]
        self.hands[seat] = (self.hands[seat] & ~(1 << nine)) | (1 << old_up)
        self.stock[0] = nine
        self.known[seat] |= 1 << old_up
        self.step = STEP_EXCHANGED

    def _close(self) -> None:
        seat = self.to_move
        self.closed = True
        self.closer = seat
        self.otc = self.tw[1 - seat]
        dead_up = 1 << self.stock[0]
        self.absent[0] |= dead_up
        self.absent[1] |= dead_up
        self.stock = []
        self.phase = LEAD
        self.step = STEP_CLOSED
        self.closing_lead = True

    def _declare(self) -> None:
        seat = self.to_move
        opp = 1 - seat
        if self.total(seat) >= 66:
            if not self.closed or seat == self.closer:
                self._finish(seat, self.game_points_against(opp), DECLARED)
            else:
                self._finish(seat, self._closer_opponent_out_points(), CLOSER_OPPONENT_OUT)
        elif seat == self.closer:
            self._finish(opp, self._failed_close_points(), FALSE_DECLARATION)
        else:
            self._finish(opp, self._false_declaration_points(opp), FALSE_DECLARATION)

    def _pass(self) -> None:
        if self.closed:
            closer = self.closer
            if self.total(closer) >= 66 and not self.rules.closer_must_declare:
                self._finish(closer, self.game_points_against(1 - closer), PLAYED_OUT)
            else:
                self._finish(1 - closer, self._failed_close_points(), CLOSE_FAILED)
            return
        t0, t1 = self.total(0), self.total(1)
        if t0 == t1:
            self._finish(None, 0, TIE)
        else:
            winner = 0 if t0 > t1 else 1
            self._finish(winner, self.game_points_against(1 - winner), PLAYED_OUT)

    # ----------------------------------------------------------------- scoring (R13)

    def game_points_against(self, loser: int) -> int:
        """G(loser): 3 if trickless, 2 if under 33, else 1."""
        if not self.tw[loser]:
            return 3
        total = self.total(loser)
        if not self.rules.schneider_counts_marriages:
            total -= self.mp[loser]
        return 2 if total < 33 else 1

    def _closer_opponent_out_points(self) -> int:
        option = self.rules.closer_opponent_out_points
        if option == "2or3_at_close":
            return 3 if self.otc == 0 else 2
        return 2 if option == "flat2" else 3

    def _failed_close_points(self) -> int:
        option = self.rules.failed_close_points
        if option == "2or3_at_close":
            return 3 if self.otc == 0 else 2
        if option == "2or3_at_end":
            return 3 if self.tw[1 - self.closer] == 0 else 2
        return 3 if option == "flat3" else 2

    def _false_declaration_points(self, opp: int) -> int:
        if self.rules.false_declaration_points == "flat2":
            return 2
        return 3 if self.tw[opp] == 0 else 2

    def _finish(self, winner: int | None, points: int, reason: str) -> None:
        self.result = (winner, points, reason)
        self.phase = OVER

    # ----------------------------------------------------------------- legal actions

    def _settle(self) -> None:
        """Recompute ``legal``, applying forced single actions and auto-declares (R5.1, R12.5)."""
        while True:
            phase = self.phase
            if phase == FOLLOW:
                if self.stock:
                    legal = cards_of(self.hands[self.to_move])
                else:
                    legal = self.strict_follows()
            elif phase == LEAD:
                if self.rules.auto_declare and self.total(self.to_move) >= 66:
                    self._declare()
                    continue
                legal = self._lead_actions()
            elif phase == PRE_DRAW:
                legal = _PRE_DRAW_ACTIONS
            elif phase == FINAL:
                if self.rules.auto_declare:
                    legal = [DECLARE if self.total(self.to_move) >= 66 else PASS]
                else:
                    legal = _FINAL_ACTIONS if self._declare_offered() else [PASS]
            else:
                self.legal = []
                return
            if len(legal) > 1:
                self.legal = legal
                return
            self._do(legal[0])

    def _declare_offered(self) -> bool:
        rules = self.rules
        if rules.auto_declare:
            return False
        return not rules.reject_false_declaration or self.total(self.to_move) >= 66

    def _lead_actions(self) -> list[int]:
        seat = self.to_move
        hand = self.hands[seat]
        rules = self.rules
        step = self.step
        if step == STEP_MELDED:
            suit = self.pending_meld
            legal = [DECLARE] if self._declare_offered() else []
            legal.append(suit * 6 + KING)
            legal.append(suit * 6 + QUEEN)
            return legal
        legal = []
        stock = self.stock
        if stock:
            n_stock = len(stock)
            if step == STEP_NONE and self.tw[seat] and n_stock >= rules.exchange_min_stock:
                if hand >> (self.trump * 6 + NINE) & 1:
                    legal.append(EXCHANGE)
            if step <= STEP_EXCHANGED and n_stock >= rules.close_min_stock_after_draw:
                if self.trick_number > 1 or rules.allow_close_before_first_trick:
                    legal.append(CLOSE)
            may_meld = self.tw[seat] or rules.marriage_on_first_lead
        else:
            may_meld = (rules.marriages_in_phase_b or (self.closing_lead and rules.marriage_on_closing_lead)) and (
                self.tw[seat] or rules.marriage_on_first_lead)
        if may_meld:
            for s in range(4):
                if (hand >> (s * 6 + KING)) & 3 == 3:
                    legal.append(MELD + s)
        if not rules.auto_declare and (not rules.reject_false_declaration or self.total(seat) >= 66):
            legal.append(DECLARE)
        legal.extend(cards_of(hand))
        return legal

    def strict_follows(self) -> list[int]:
        """Phase B follows (R6.3): head, else follow, else trump, else anything."""
        hand = self.hands[self.to_move]
        lead = self.lead
        same = hand & SUIT_MASK[CARD_SUIT[lead]]
        if same:
            if self.rules.must_head:
                higher = same & ((1 << lead) - 1)
                if higher:
                    return cards_of(higher)
            return cards_of(same)
        if self.rules.must_trump_when_void:
            trumps = hand & SUIT_MASK[self.trump]
            if trumps:
                return cards_of(trumps)
        return cards_of(hand)

    def __repr__(self) -> str:
        return (f"<Game trump={SUITS[self.trump]} trick={self.trick_number} phase={self.phase} "
                f"to_move={self.to_move} hands={[CARD_NAMES[c] for c in cards_of(self.hands[0])]}"
                f"/{[CARD_NAMES[c] for c in cards_of(self.hands[1])]}>")
