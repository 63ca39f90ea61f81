"""Single-observer Information Set MCTS (Cowling, Powley & Whitehouse 2012).

One tree over the searching seat's information: every iteration samples a fresh world
consistent with the view, walks down through the actions legal in that world (UCB1 with
availability counts, so statistics are pooled across worlds), adds one node, and finishes the
hand with ``expert`` rollouts, switching to the exact alpha-beta value once the stock is closed
or exhausted and few enough cards remain. A close or a marriage is one macro action (the
rest of that lead is ``expert``'s), and the tree never branches on dominated choices
(``prune``). Rewards are game points / 3 from the point of view of
the seat that made each move. The root plays its most visited action.
"""

from __future__ import annotations

import math
import random
import time

from arena.engine.core import CLOSE, DECLARE, EXCHANGE, LEAD, MELD, STEP_NONE, Core

from .endgame import value
from .knowledge import Knowledge, Situation
from .policies import expert


class Node:
    """Statistics of one action in the tree (from the view of the seat that took it)."""

    __slots__ = ("children", "visits", "reward", "avail")

    def __init__(self) -> None:
        self.children: dict[int, Node] = {}
        self.visits = 0
        self.reward = 0.0
        self.avail = 1


def prune(legal: list[int], total: int, stock_open: bool) -> list[int]:
    """The actions the tree branches on: a correct declaration when there is one (it is
    dominant), never a false one; the exchange when legal (always worth it); and in Phase A,
    once a marriage can be announced, only the announcements (or a close first)."""
    if DECLARE in legal:
        if total >= 66:
            return [DECLARE]
        legal = [a for a in legal if a != DECLARE]
    if EXCHANGE in legal:
        return [EXCHANGE]
    if stock_open:
        melds = [a for a in legal if MELD <= a < MELD + 4]
        if melds:
            return ([CLOSE] if CLOSE in legal else []) + melds
    return legal


def playout(g: Core, exact_cards: int) -> None:
    """Finish ``g`` with expert moves; stop (unfinished) in the strict phase once each hand
    holds at most ``exact_cards`` cards, for the exact solver to take over."""
    while g.result is None:
        if not g.stock and g.hands[g.to_move].bit_count() <= exact_cards:
            return
        g.apply(expert(Situation.from_game(g, g.to_move), g.legal))


def _step(g: Core, a: int, mover: int) -> None:
    """Apply ``a``; after a close or a marriage the rest of that lead is ``expert``'s, so the
    action is valued by one sensible continuation instead of by every continuation at once."""
    g.apply(a)
    if a == CLOSE or MELD <= a < MELD + 4:
        while g.result is None and g.to_move == mover and g.phase == LEAD and g.step != STEP_NONE:
            g.apply(expert(Situation.from_game(g, mover), g.legal))


def search(know: Knowledge, legal: list[int], rng: random.Random, iterations: int, c: float = 0.7,
           exact_cards: int = 4, deadline: float | None = None) -> dict[int, int]:
    """Run ``iterations`` iterations from the view's position, branching at the root on
    ``legal`` (already pruned); return the visit count of each root action. Past
    ``deadline`` (``time.monotonic()``; a safety net only) it stops early."""
    root = Node()
    seat = know.situation.seat
    for i in range(iterations):
        if deadline is not None and i & 15 == 15 and time.monotonic() > deadline:
            break
        g = know.world(rng)
        node = root
        path: list[tuple[Node, int]] = []  # (node, seat that moved into it)
        while g.result is None:
            actions = legal if node is root else prune(g.legal, g.total(g.to_move), bool(g.stock))
            untried = [a for a in actions if a not in node.children]
            mover = g.to_move
            if untried:
                a = untried[0] if len(untried) == 1 else untried[rng.randrange(len(untried))]
                child = node.children[a] = Node()
                _step(g, a, mover)
                path.append((child, mover))
                break
            best, best_score = actions[0], -math.inf
            for a in actions:
                child = node.children[a]
                child.avail += 1
                score = child.reward / child.visits + c * math.sqrt(math.log(child.avail) / child.visits)
                if score > best_score:
                    best, best_score = a, score
            node = node.children[best]
            _step(g, best, mover)
            path.append((node, mover))
        playout(g, exact_cards)
        outcome = g.value(seat) if g.result is not None else value(g, seat)
        for node, mover in path:
            node.visits += 1
            node.reward += (outcome if mover == seat else -outcome) / 3.0
    return {a: child.visits for a, child in root.children.items()}
