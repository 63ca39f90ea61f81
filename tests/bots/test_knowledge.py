"""Card counting: inferences are sound, sampled worlds are consistent, and the rollout
situation (from a searched world) equals the one read from the view."""

from __future__ import annotations

import random
from typing import Any

import pytest

from arena.engine import Hand, Rules
from arena.engine.core import ACTION_INDEX, ACTION_NAMES, Core
from botkit.bots import GreedyBot
from botkit.cards import CARD_INDEX, mask_of
from botkit.knowledge import Knowledge, Situation, inferred_absent

from ..engine.strategies import RULE_VARIANTS as PROFILES

pytestmark = pytest.mark.unit

_SLOTS = ("seat", "trump", "mine", "unseen", "opp_known", "up", "stock_size", "closed", "closer", "otc",
          "opp_size", "tp", "tw", "mp", "lead", "phase", "pending_meld", "trick_number")


def positions(rules: Rules, n: int) -> list[tuple[Hand, dict[str, Any], int]]:
    """Decisions from greedy play with random closes: (hand, view of the mover, dead up-card)."""
    rng = random.Random(repr(rules))
    out = []
    for i in range(n):
        hand = Hand.deal_seeded(f"know:{i}", dealer=i & 1, rules=rules)
        bots = [GreedyBot("k", 0, rules=rules), GreedyBot("k", 1, rules=rules)]
        up = -1
        while not hand.is_over:
            seat = hand.to_move
            assert seat is not None
            view = hand.view(seat)
            if view["up_card"] is not None:
                up = CARD_INDEX[view["up_card"]]
            out.append((hand.copy(), view, up))
            legal = view["legal_actions"]
            action = "close" if "close" in legal and rng.random() < 0.1 else bots[seat].act(view, legal)
            hand.apply(action)
    return out


@pytest.mark.parametrize("rules", PROFILES[:3], ids=lambda r: repr(r)[:40])
def test_inference_is_sound_and_worlds_are_consistent(rules: Rules) -> None:
    rng = random.Random(5)
    checked_forbidden = 0
    for hand, view, up in positions(rules, 40):
        seat = view["seat"]
        truth = mask_of(hand.view(1 - seat)["hand"])
        know = Knowledge(view, rules, up)
        sit = know.situation
        assert truth & sit.forbidden == 0
        assert truth & ~sit.opp_possible == 0
        checked_forbidden += bool(sit.forbidden)
        for _ in range(2):
            opp, stock = know.sample(rng)
            assert not mask_of([ACTION_NAMES[c][5:] for c in opp]) & sit.forbidden
            names = [ACTION_NAMES[c][5:] for c in opp], [ACTION_NAMES[c][5:] for c in stock]
            world = Hand.from_view(view, names[0], names[1], rules)  # the engine checks consistency
            model = Core.from_view(view, opp, stock, rules)
            assert [ACTION_NAMES[a] for a in model.legal] == world.legal_actions()
    assert checked_forbidden > 10


@pytest.mark.parametrize("rules", PROFILES[:2], ids=lambda r: repr(r)[:40])
def test_rollout_situation_equals_view_situation(rules: Rules) -> None:
    for hand, view, _ in positions(rules, 25):
        seat = view["seat"]
        opp = [ACTION_INDEX["play " + c] for c in hand.view(1 - seat)["hand"]]
        drawn = sum(1 for e in view["events"] if e["type"] == "draw")
        stock = [ACTION_INDEX["play " + c] for c in hand.deck[13 + drawn:]] if drawn < 12 else []
        g = Core.from_view(view, opp, stock, rules)
        a, b = Situation.from_view(view, rules), Situation.from_game(g, seat)
        assert {k: getattr(a, k) for k in _SLOTS} == {k: getattr(b, k) for k in _SLOTS}


@pytest.mark.parametrize("rules", PROFILES[:3], ids=lambda r: repr(r)[:40])
def test_model_tracks_the_same_absent_cards_as_the_view(rules: Rules) -> None:
    for hand, view, up in positions(rules, 30):
        g = Core.deal([CARD_INDEX[c] for c in hand.deck], hand.dealer, rules)
        for action in hand.record()["actions"]:
            g.apply(ACTION_INDEX[action])
        assert tuple(g.absent) == inferred_absent(view, rules, up)


def test_copied_worlds_equal_worlds_read_from_the_view() -> None:
    rules = Rules()
    for hand, view, up in positions(rules, 12):
        know = Knowledge(view, rules, up)
        a, b = random.Random(1), random.Random(1)
        fresh = [Core.from_view(view, *know.sample(a), rules, know.absent) for _ in range(3)]
        copied = [know.world(b) for _ in range(3)]
        for f, c in zip(fresh, copied):
            assert (f.hands, f.stock, f.legal, f.shown, f.absent) == (c.hands, c.stock, c.legal, c.shown, c.absent)
