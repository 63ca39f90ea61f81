"""botkit.endgame: exact values equal a plain minimax over the rules core, under every profile."""

from __future__ import annotations

import random

import pytest

from arena.engine import Hand, Rules
from arena.engine.cards import CARD_INDEX
from arena.engine.core import CLOSE, DECLARE, Core
from botkit.endgame import action_values

from ..engine.strategies import RULE_VARIANTS as PROFILES

pytestmark = pytest.mark.unit


def minimax(g: Core, root: int) -> int:
    """Every legal action (declaring at 66 or more included as a choice), no pruning."""
    if g.result is not None:
        return g.value(root)
    values = []
    for a in g.legal:
        if a == DECLARE and g.total(g.to_move) < 66 and len(g.legal) > 1:
            continue
        child = g.copy()
        child.apply(a)
        values.append(minimax(child, root))
    return max(values) if g.to_move == root else min(values)


def endgames(rules: Rules, n: int, seed: int) -> list[Core]:
    """Random positions in Phase B (exhausted or closed stock) with 3-4 cards a hand."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        g = Core.deal([CARD_INDEX[c] for c in Hand.deal_seeded(f"endgame:{seed}:{i}").deck], i & 1, rules)
        cards = rng.choice([3, 4])
        while g.result is None and (g.stock or g.hands[g.to_move].bit_count() > cards):
            if CLOSE in g.legal and rng.random() < 0.15:
                g.apply(CLOSE)
                continue
            g.apply(rng.choice([a for a in g.legal if a != DECLARE or g.total(g.to_move) >= 66]))
        if g.result is None:
            out.append(g)
    return out


@pytest.mark.parametrize("rules", PROFILES, ids=lambda r: repr(r)[:40])
def test_alpha_beta_equals_minimax(rules: Rules) -> None:
    positions = endgames(rules, 25, 11)
    assert len(positions) >= 10
    for g in positions:
        root = g.to_move
        for a, v in action_values(g, root).items():
            child = g.copy()
            child.apply(a)
            assert v == minimax(child, root), (g, a)
