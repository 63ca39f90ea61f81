"""Property tests of docs/rules.md R16 and the API invariants over random legal play."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import CARD_NAMES, Hand, Match, Rules
from arena.engine.cards import CARD_POINTS, KING, QUEEN, SUITS, card
from arena.engine.invariants import check_end, check_step
from arena.engine.view import hand_view

from .strategies import PROFILES, pick, play_out

pytestmark = pytest.mark.property

seeds = st.integers(min_value=0, max_value=2**32)
profiles = st.sampled_from(PROFILES)
POINTS = dict(zip(CARD_NAMES, CARD_POINTS))


def _cards_in(obj: Any) -> set[str]:
    """Every card name mentioned anywhere in a JSON-like value."""
    if isinstance(obj, str):
        return {obj} if obj in POINTS else set()
    if isinstance(obj, dict):
        return set().union(*(_cards_in(v) for v in obj.values())) if obj else set()
    if isinstance(obj, list):
        return set().union(*(_cards_in(v) for v in obj)) if obj else set()
    return set()


@settings(max_examples=150, deadline=None)
@given(seed=seeds, profile=profiles, policy_seed=seeds)
def test_r16_invariants_hold_after_every_action(seed: int, profile: str, policy_seed: int) -> None:
    rules = Rules.profile(profile)
    hand = Hand.deal_seeded(seed, dealer=seed % 2, rules=rules)
    rng = random.Random(policy_seed)
    check_step(hand)
    for _ in play_out(hand, rng):
        check_step(hand)
    check_end(hand)


@settings(max_examples=100, deadline=None)
@given(seed=seeds, profile=profiles, policy_seed=seeds)
def test_same_seed_gives_same_hand_and_replay_reproduces_it(seed: int, profile: str, policy_seed: int) -> None:
    rules = Rules.profile(profile)
    a = Hand.deal_seeded(seed, 1, rules)
    b = Hand.deal_seeded(seed, 1, rules)
    assert a.deck == b.deck and a.view(0) == b.view(0) and a.view(1) == b.view(1)
    list(play_out(a, random.Random(policy_seed)))
    again = Hand.replay(a.record())
    assert again.result == a.result
    assert again.view(0) == a.view(0) and again.view(1) == a.view(1)
    assert again.record() == a.record()


@settings(max_examples=100, deadline=None)
@given(seed=seeds, profile=profiles, policy_seed=seeds, cut=st.integers(0, 30))
def test_copy_is_independent(seed: int, profile: str, policy_seed: int, cut: int) -> None:
    rules = Rules.profile(profile)
    hand = Hand.deal_seeded(seed, 0, rules)
    rng = random.Random(policy_seed)
    for _ in range(cut):
        if hand.is_over:
            break
        hand.apply(pick(hand, rng))
    before = (hand.view(0), hand.view(1), hand.record(), hand.legal_actions())
    twin = hand.copy()
    list(play_out(twin, rng))
    assert (hand.view(0), hand.view(1), hand.record(), hand.legal_actions()) == before
    if not hand.is_over:
        assert twin.is_over and not hand.is_over


def _knowable(hand: Hand, seat: int, history: set[str]) -> set[str]:
    """Cards ``seat`` may know of: held now or before, played, shown face up or by a marriage."""
    view = hand.view(seat)
    known = set(view["hand"]) | history
    for e in view["events"]:
        if e["type"] == "play":
            known.add(e["card"])
        elif e["type"] == "meld":
            suit = SUITS.index(e["suit"])
            known |= {CARD_NAMES[card(suit, KING)], CARD_NAMES[card(suit, QUEEN)]}
        elif e["type"] == "exchange":
            known |= {e["gave"], e["took"]}
        elif e["type"] == "draw" and e["card"] is not None:
            known.add(e["card"])
    return known


@settings(max_examples=150, deadline=None)
@given(seed=seeds, profile=profiles, policy_seed=seeds)
def test_no_view_holds_a_card_its_seat_cannot_know(seed: int, profile: str, policy_seed: int) -> None:
    rules = Rules.profile(profile)
    hand = Hand.deal_seeded(seed, 0, rules)
    rng = random.Random(policy_seed)
    up_cards = {hand.deck[12]}
    held: list[set[str]] = [set(hand.view(0)["hand"]), set(hand.view(1)["hand"])]
    while True:
        for seat in (0, 1):
            held[seat] |= set(hand.view(seat)["hand"])
            view = hand.view(seat)
            if view["up_card"]:
                up_cards.add(view["up_card"])
            leaked = _cards_in(view) - _knowable(hand, seat, held[seat]) - up_cards
            assert not leaked, f"seat {seat} sees {leaked}"
            opponent_hand = set(hand.view(1 - seat)["hand"])
            assert set(view["opponent_known"]) <= opponent_hand
        if hand.is_over:
            break
        hand.apply(pick(hand, rng))


def _hidden_stock(hand: Hand) -> list[str]:
    """The face-down stock in draw order (the truth a sampled world would guess)."""
    if not hand.core.stock:
        return [CARD_NAMES[c] for c in reversed(hand.core.dead)]
    return [CARD_NAMES[c] for c in reversed(hand.core.stock[1:])]


@settings(max_examples=100, deadline=None)
@given(seed=seeds, profile=profiles, policy_seed=seeds, cut=st.integers(0, 30))
def test_from_view_with_the_true_cards_behaves_like_the_real_hand(
    seed: int, profile: str, policy_seed: int, cut: int
) -> None:
    rules = Rules.profile(profile)
    hand = Hand.deal_seeded(seed, seed % 2, rules)
    rng = random.Random(policy_seed)
    for _ in range(cut):
        if hand.is_over:
            break
        hand.apply(pick(hand, rng))
    if hand.is_over:
        return
    seat = hand.to_move
    assert seat is not None
    world = Hand.from_view(hand.view(seat), hand.view(1 - seat)["hand"], _hidden_stock(hand), rules)
    assert world.to_move == hand.to_move
    while True:
        assert world.legal_actions() == hand.legal_actions()
        assert world.view(seat) == hand.view(seat)
        assert world.total(0) == hand.total(0) and world.total(1) == hand.total(1)
        if hand.is_over:
            break
        action = pick(hand, rng)
        hand.apply(action)
        world.apply(action)
    assert world.result == hand.result


@settings(max_examples=40, deadline=None)
@given(seed=seeds, profile=profiles, policy_seed=seeds)
def test_match_score_is_the_sum_of_hand_results(seed: int, profile: str, policy_seed: int) -> None:
    rules = Rules.profile(profile)
    match = Match(rules, seed=seed)
    rng = random.Random(policy_seed)
    while not match.is_over:
        match.apply(pick(match.hand, rng))
    assert match.winner is not None
    assert match.score[match.winner] >= rules.match_target
    assert match.score[1 - match.winner] < rules.match_target
    awarded = sum(r.game_points for r in match.results)
    ties = sum(1 for r in match.results if r.winner is None)
    assert sum(match.score) >= awarded
    if rules.tie_rule == "no_carry":
        assert sum(match.score) == awarded
    else:
        assert sum(match.score) <= awarded + ties
    assert len(match.records) == len(match.results) == match.hand_index + 1
    for record, result in zip(match.records, match.results):
        assert Hand.replay(record).result == result


@settings(max_examples=100, deadline=None)
@given(seed=seeds, profile=profiles, policy_seed=seeds, seats=st.lists(st.sampled_from((0, 1)), max_size=40))
def test_views_rendered_step_by_step_equal_views_of_a_hand_replayed_afresh(
        seed: int, profile: str, policy_seed: int, seats: list[int]) -> None:
    # Views render only the log entries since the hand's last view; asking in any order, after
    # any number of moves, and changing what a view returned must give what a fresh hand gives;
    # the shared view (no copies) must equal them too.
    hand = Hand.deal_seeded(seed, 0, Rules.profile(profile))
    rng = random.Random(policy_seed)
    for seat in seats:
        shared = hand_view(hand, seat, private=False)  # the referee's: the memo's own lists
        assert shared == Hand.replay(hand.record()).view(seat)
        view = hand.view(seat)
        assert view == shared
        for part in view["events"] + view["tricks"]:
            part["seat"] = "changed by the caller"
        if hand.is_over:
            break
        hand.apply(pick(hand, rng))
        if rng.random() < 0.2:
            hand = hand.copy()
    assert (hand.view(0), hand.view(1)) == (Hand.replay(hand.record()).view(0), Hand.replay(hand.record()).view(1))
