"""botkit.model.Game agrees with arena.engine.Hand: random play, every profile, and from_view."""

from __future__ import annotations

import random
from typing import Any

import pytest

from arena.engine import Hand, Rules
from botkit.cards import CARD_INDEX
from botkit.model import ACTION_INDEX, ACTION_NAMES, Game

pytestmark = pytest.mark.unit

PROFILES = [
    Rules(),
    Rules.profile("pagat"),
    Rules.profile("santase"),
    Rules(must_head=False, must_trump_when_void=False, allow_close_before_draw=False,
          failed_close_points="2or3_at_end", schneider_counts_marriages=False, reject_false_declaration=True),
    Rules(marriages_in_phase_b=True, allow_close_before_final_draw=True, marriage_on_first_lead=False,
          failed_close_points="flat2", last_trick_bonus=0),
]


def assert_same(hand: Hand, game: Game) -> None:
    assert [ACTION_NAMES[a] for a in game.legal] == hand.legal_actions()
    if hand.is_over:
        assert hand.result is not None and game.result is not None
        assert (hand.result.winner, hand.result.game_points, str(hand.result.reason)) == game.result
    else:
        assert game.to_move == hand.to_move
    assert [game.total(0), game.total(1)] == [hand.total(0), hand.total(1)]
    for seat in (0, 1):
        view = hand.view(seat)
        assert game.known[1 - seat] == sum(1 << CARD_INDEX[c] for c in view["opponent_known"])
        assert game.hands[seat] == sum(1 << CARD_INDEX[c] for c in view["hand"])


def pick(rng: random.Random, legal: list[str]) -> str:
    """Random play that mostly declares only when it is correct, so hands run long."""
    if "declare" in legal and rng.random() < 0.9:
        legal = [a for a in legal if a != "declare"] or legal
    return rng.choice(legal)


@pytest.mark.parametrize("rules", PROFILES, ids=lambda r: repr(r)[:40])
def test_random_play_agrees(rules: Rules) -> None:
    rng = random.Random(repr(rules))
    for i in range(150):
        hand = Hand.deal_seeded(i, dealer=i & 1, rules=rules)
        game = Game.deal(list(hand.deck), i & 1, rules)
        assert_same(hand, game)
        while not hand.is_over:
            action = pick(rng, hand.legal_actions())
            hand.apply(action)
            game.apply(ACTION_INDEX[action])
            assert_same(hand, game)


def hidden(hand: Hand, seat: int) -> tuple[list[str], list[str]]:
    """The true opponent cards and hidden stock (draw order) as ``seat`` cannot see them."""
    view = hand.view(seat)
    opp = hand.view(1 - seat)["hand"]
    drawn = sum(1 for e in view["events"] if e["type"] == "draw")
    stock = list(hand.deck[13 + drawn:]) if drawn < 12 else []
    return opp, stock


@pytest.mark.parametrize("rules", PROFILES[:3], ids=lambda r: repr(r)[:40])
def test_from_view_agrees(rules: Rules) -> None:
    rng = random.Random(7)
    for i in range(120):
        hand = Hand.deal_seeded(1000 + i, dealer=i & 1, rules=rules)
        stop = rng.randrange(30)
        for _ in range(stop):
            if hand.is_over:
                break
            hand.apply(pick(rng, hand.legal_actions()))
        for seat in (0, 1):
            view: dict[str, Any] = hand.view(seat)
            opp, stock = hidden(hand, seat)
            a = Hand.from_view(view, opp, stock, rules)
            g = Game.from_view(view, [CARD_INDEX[c] for c in opp], [CARD_INDEX[c] for c in stock], rules)
            assert_same(a, g)
            while not a.is_over:
                action = pick(rng, a.legal_actions())
                a.apply(action)
                g.apply(ACTION_INDEX[action])
                assert_same(a, g)
