"""Exact alpha-beta on game points for hands whose cards are all known (one world).

``action_values(game, root)`` gives the exact value, in game points for ``root`` (negative
when lost), of each legal action. Phase A states are searched through ``Core.copy``/``apply``
(draws included), and once the stock is closed or exhausted a tight recursive search on
bitmasks takes over (``_PhaseB``), with a transposition table per solve. Declaring under 66
is never searched, and a leader at 66 or more always declares: its opponent's total and
tricks can only grow, so playing on can never score more.
"""

from __future__ import annotations

from .cards import CARD_POINTS, KING, QUEEN, cards_of
from arena.engine.core import DECLARE, FOLLOW, LEAD, MELD, STEP_NONE, Core
from arena.engine.scoring import Outcome, declaration_outcome, marriage_value, played_out_outcome, seat_total
from arena.engine.tricks import WINNING_FOLLOWS, strict_follows


_INF = 99
_EXACT, _LOWER, _UPPER = 0, 1, 2


class _PhaseB:
    """Strict-phase search for one root seat and one hand's constants (rules, close state)."""

    def __init__(self, g: Core, root: int) -> None:
        rules = g.rules
        self.root = root
        self.trump = g.trump
        self.winning = WINNING_FOLLOWS[g.trump]
        self.closer = g.closer
        self.otc = g.opp_tricks_at_close
        self.bonus = 0 if g.closed else rules.last_trick_bonus
        self.rules = rules
        self.table: dict[tuple[int, ...], tuple[int, int]] = {}
        self.nodes = 0
        self.melds = rules.marriages_in_phase_b
        self.meld_first = rules.marriage_on_first_lead

    # ------------------------------------------------------------------ scoring

    def _value(self, outcome: Outcome) -> int:
        """An outcome's game points for root (negative when lost)."""
        winner, points, _ = outcome
        if winner is None:
            return 0
        return points if winner == self.root else -points

    def _declared(self, m: int, tp: tuple[int, int], tw: tuple[int, int], mp: tuple[int, int]) -> int:
        """Value for root when ``m`` declares correctly."""
        totals = (seat_total(tp[0], tw[0], mp[0]), seat_total(tp[1], tw[1], mp[1]))
        return self._value(declaration_outcome(self.rules, m, totals, tw, mp, self.closer, self.otc))

    def _final(self, w: int, tp: tuple[int, int], tw: tuple[int, int], mp: tuple[int, int]) -> int:
        """Value for root after the last trick, won by ``w``, who then declares or passes."""
        rules = self.rules
        totals = [seat_total(tp[0], tw[0], mp[0]), seat_total(tp[1], tw[1], mp[1])]
        totals[w] += self.bonus
        winner, points, _ = played_out_outcome(rules, totals, tw, mp, self.closer, self.otc)  # at every leaf: inline
        passed = 0 if winner is None else points if winner == self.root else -points
        if totals[w] < 66:
            return passed
        declared = self._value(declaration_outcome(rules, w, totals, tw, mp, self.closer, self.otc))
        if rules.auto_declare:
            return declared
        return max(passed, declared) if w == self.root else min(passed, declared)

    # ------------------------------------------------------------------ search

    def search(self, h0: int, h1: int, mover: int, lead: int, tp0: int, tp1: int, tw0: int, tw1: int,
               mp0: int, mp1: int, alpha: int, beta: int) -> int:
        """Value for root of the strict-phase state (``lead`` -1 when ``mover`` leads)."""
        self.nodes += 1
        key = (h0, h1, mover, lead, tp0, tp1, tw0 > 0, tw1 > 0, mp0, mp1)
        hit = self.table.get(key)
        if hit is not None:
            flag, v = hit
            if flag == _EXACT:
                return v
            if flag == _LOWER:
                if v >= beta:
                    return v
                alpha = max(alpha, v)
            elif v <= alpha:
                return v
            else:
                beta = min(beta, v)
        a0, b0 = alpha, beta
        maximizing = mover == self.root
        best = -_INF if maximizing else _INF
        hand = h0 if mover == 0 else h1
        if lead < 0:
            total = seat_total(tp0, tw0, mp0) if mover == 0 else seat_total(tp1, tw1, mp1)
            if total >= 66:
                return self._declared(mover, (tp0, tp1), (tw0, tw1), (mp0, mp1))
            moves = sorted(cards_of(hand), key=_lead_order)
        else:
            winning = self.winning[lead]
            moves = _follow_order(strict_follows(self.rules, hand, lead, self.trump), winning)
            leader = 1 - mover
            points_lead = CARD_POINTS[lead]
        for c in moves:
            b = 1 << c
            n0, n1 = (h0 ^ b, h1) if mover == 0 else (h0, h1 ^ b)
            if lead < 0:
                v = self.search(n0, n1, 1 - mover, c, tp0, tp1, tw0, tw1, mp0, mp1, alpha, beta)
            else:  # the follow ends the trick
                w = mover if winning >> c & 1 else leader
                pts = points_lead + CARD_POINTS[c]
                if w == 0:
                    ntp0, ntp1, ntw0, ntw1 = tp0 + pts, tp1, tw0 + 1, tw1
                else:
                    ntp0, ntp1, ntw0, ntw1 = tp0, tp1 + pts, tw0, tw1 + 1
                if not n0 and not n1:
                    v = self._final(w, (ntp0, ntp1), (ntw0, ntw1), (mp0, mp1))
                else:
                    v = self.search(n0, n1, w, -1, ntp0, ntp1, ntw0, ntw1, mp0, mp1, alpha, beta)
            if maximizing:
                if v > best:
                    best = v
                    alpha = max(alpha, v)
            elif v < best:
                best = v
                beta = min(beta, v)
            if alpha >= beta:
                break
        if lead < 0 and alpha < beta and self.melds:
            best = self._meld_leads(h0, h1, mover, tp0, tp1, tw0, tw1, mp0, mp1, alpha, beta, best)
        if best <= a0:
            self.table[key] = (_UPPER, best)
        elif best >= b0:
            self.table[key] = (_LOWER, best)
        else:
            self.table[key] = (_EXACT, best)
        return best

    def _meld_leads(self, h0: int, h1: int, mover: int, tp0: int, tp1: int, tw0: int, tw1: int, mp0: int,
                    mp1: int, alpha: int, beta: int, best: int) -> int:
        """Leads that announce a marriage (only with ``marriages_in_phase_b``)."""
        if not ((tw0 if mover == 0 else tw1) or self.meld_first):
            return best
        maximizing = mover == self.root
        hand = h0 if mover == 0 else h1
        for s in range(4):
            if (hand >> (s * 6 + KING)) & 3 != 3:
                continue
            value = marriage_value(s, self.trump)
            n_mp0, n_mp1 = (mp0 + value, mp1) if mover == 0 else (mp0, mp1 + value)
            tp, tw = (tp0, tp1), (tw0, tw1)
            if seat_total(tp[mover], tw[mover], n_mp0 if mover == 0 else n_mp1) >= 66:
                outcomes = [self._declared(mover, tp, tw, (n_mp0, n_mp1))]  # dominant, or automatic
            else:
                outcomes = []
            for c in (s * 6 + KING, s * 6 + QUEEN) if not outcomes else ():
                b = 1 << c
                n0, n1 = (h0 ^ b, h1) if mover == 0 else (h0, h1 ^ b)
                outcomes.append(self.search(n0, n1, 1 - mover, c, tp0, tp1, tw0, tw1, n_mp0, n_mp1, alpha, beta))
            v = max(outcomes) if maximizing else min(outcomes)
            best = max(best, v) if maximizing else min(best, v)
        return best


def _lead_order(c: int) -> int:
    """Aces and tens first (they usually decide the hand), then by rank."""
    return c % 6


def _follow_order(legal: int, winning: int) -> list[int]:
    """Cards that win cheaply first (``winning``: the follows that win), then the cheapest losers."""
    cards = cards_of(legal)

    def key(c: int) -> tuple[int, int]:
        return (0, -c) if winning >> c & 1 else (1, CARD_POINTS[c])

    return sorted(cards, key=key)


def _strict_state(g: Core) -> bool:
    """Whether ``_PhaseB`` can search ``g`` directly (strict phase, a plain lead or a follow)."""
    if g.stock or g.result is not None:
        return False
    if g.phase == FOLLOW:
        return True
    return g.phase == LEAD and g.step == STEP_NONE and not g.closing_lead


def _plain_actions(g: Core) -> list[int]:
    """The legal actions worth searching: no declaration under 66."""
    if DECLARE in g.legal and g.total(g.to_move) < 66:
        return [a for a in g.legal if a != DECLARE] or g.legal
    return g.legal


Solvers = dict[tuple[bool, int, int], _PhaseB]


def value(g: Core, root: int, solvers: Solvers | None = None, alpha: int = -_INF, beta: int = _INF) -> int:
    """The exact game-point value of ``g`` for ``root``; ``solvers`` share transposition
    tables between calls on the same hand."""
    if g.result is not None:
        return g.value(root)
    if solvers is None:
        solvers = {}
    if _strict_state(g):
        key = (g.closed, g.closer, g.opp_tricks_at_close)
        solver = solvers.get(key)
        if solver is None:
            solver = solvers[key] = _PhaseB(g, root)
        tp, tw, mp = g.trick_points, g.tricks_won, g.marriage_points
        return solver.search(g.hands[0], g.hands[1], g.to_move, g.lead, tp[0], tp[1], tw[0], tw[1], mp[0], mp[1],
                             alpha, beta)
    if g.phase == LEAD and g.total(g.to_move) >= 66 and DECLARE in g.legal:
        child = g.copy()
        child.apply(DECLARE)
        return child.value(root)
    maximizing = g.to_move == root
    best = -_INF if maximizing else _INF
    for a in _plain_actions(g):
        child = g.copy()
        child.apply(a)
        best, alpha, beta = _improve(maximizing, value(child, root, solvers, alpha, beta), best, alpha, beta)
        if alpha >= beta:
            break
    return best


def _improve(maximizing: bool, v: int, best: int, alpha: int, beta: int) -> tuple[int, int, int]:
    """(best, alpha, beta) once a child's value ``v`` is known (``_PhaseB.search`` has it inline)."""
    if maximizing:
        return (v, max(alpha, v), beta) if v > best else (best, alpha, beta)
    return (v, alpha, min(beta, v)) if v < best else (best, alpha, beta)


def action_values(g: Core, root: int, actions: list[int] | None = None) -> dict[int, int]:
    """The exact value for ``root`` (to move in ``g``) of each action (default: all legal
    ones except a declaration under 66)."""
    out: dict[int, int] = {}
    solvers: Solvers = {}
    for a in actions if actions is not None else _plain_actions(g):
        child = g.copy()
        child.apply(a)
        out[a] = value(child, root, solvers)
    return out


__all__ = ["action_values", "value", "MELD"]
