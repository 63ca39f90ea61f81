"""The public API contract of docs/architecture.md#engine-api: names, errors, seeds, records, views."""

from __future__ import annotations

import random

import pytest

from arena.engine import CARD_NAMES, Hand, HandResult, IllegalAction, MalformedAction, Match, Reason, Rules
from arena.engine.rules import OPTION_DESCRIPTIONS

pytestmark = pytest.mark.unit

VIEW_KEYS = {
    "seat", "dealer", "to_move", "trump", "up_card", "stock_size", "closed", "closer", "trick_number",
    "hand", "opponent_hand_size", "opponent_known", "lead", "pending_meld", "tricks", "marriages",
    "trick_points", "tricks_won", "totals", "events", "legal_actions", "result",
}


def test_rules_default_matches_rules_md_defaults() -> None:
    rules = Rules()
    assert rules.match_target == 7 and rules.first_dealer == "random" and rules.must_head
    assert rules.exchange_min_stock == 2 and rules.close_min_stock_after_draw == 2
    assert rules.failed_close_points == "2or3_at_close" and rules.tie_rule == "carry_accumulate"
    assert rules.to_dict() == {} and Rules.profile("default") == rules
    assert set(OPTION_DESCRIPTIONS) == set(rules.as_dict())


def test_named_profiles() -> None:
    pagat = Rules.profile("pagat")
    assert pagat.false_declaration_points == "flat2" and pagat.closer_must_declare
    santase = Rules.profile("santase")
    assert santase.match_target == 11 and santase.auto_declare and santase.exchange_min_stock == 4
    assert Rules.profile("santase", match_target=7).match_target == 7


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"match_taget": 7}, "match_taget"),
        ({"match_target": 0}, "match_target"),
        ({"must_head": "yes"}, "must_head"),
        ({"first_dealer": 2}, "first_dealer"),
        ({"tie_rule": "carry"}, "tie_rule"),
        ({"exchange_min_stock": 1}, "exchange_min_stock"),
    ],
)
def test_bad_rule_options_raise_value_error_naming_them(options: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        Rules(**options)


def test_unknown_profile_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="nope"):
        Rules.profile("nope")


def test_deal_seeded_uses_random_shuffle_of_the_canonical_order() -> None:
    deck = list(CARD_NAMES)
    assert deck[0] == "AC" and deck[-1] == "9S" and deck[1] == "TC"
    random.Random(42).shuffle(deck)
    assert Hand.deal_seeded(42, 0).deck == tuple(deck)


def test_match_seed_derivation() -> None:
    match = Match(Rules(), seed=7)
    deck = list(CARD_NAMES)
    random.Random("7:0").shuffle(deck)
    assert match.hand.deck == tuple(deck)
    assert match.hand.dealer == random.Random(7).randrange(2)
    assert Match(Rules(first_dealer=1), seed=7).hand.dealer == 1


@pytest.mark.parametrize("bad", ["", "play", "draw now", "play XX", "meld Z", "PLAY AC", None, 3])
def test_malformed_actions_raise_and_change_nothing(bad: object) -> None:
    hand = Hand.deal_seeded(3, 0)
    before = (hand.view(0), hand.view(1), hand.record())
    with pytest.raises(MalformedAction, match="not an action"):
        hand.apply(bad)  # type: ignore[arg-type]
    assert (hand.view(0), hand.view(1), hand.record()) == before


def test_illegal_action_says_why_and_changes_nothing() -> None:
    hand = Hand.deal_seeded(3, 0)
    seat = hand.to_move
    assert seat is not None
    foreign = next(c for c in CARD_NAMES if c not in hand.view(seat)["hand"])
    before = (hand.view(0), hand.view(1), hand.record())
    with pytest.raises(IllegalAction, match=f"does not hold {foreign}") as info:
        hand.apply(f"play {foreign}")
    assert "legal:" in str(info.value)
    assert isinstance(info.value, ValueError)
    assert (hand.view(0), hand.view(1), hand.record()) == before
    with pytest.raises(IllegalAction):
        hand.apply("pass")


def test_finished_hand_refuses_every_action() -> None:
    hand = Hand.deal_seeded(5, 0)
    hand.apply("declare")  # a false declaration at the first lead
    assert hand.is_over and hand.to_move is None and hand.legal_actions() == []
    assert hand.result == HandResult(winner=0, game_points=3, reason=Reason.FALSE_DECLARATION,
                                     totals=(0, 0), tricks=(0, 0))
    with pytest.raises(IllegalAction, match="over"):
        hand.apply("declare")


def test_view_has_exactly_the_contract_keys_and_is_json() -> None:
    import json

    match = Match(Rules(), seed=11)
    for seat in (0, 1):
        view = match.hand.view(seat)
        assert set(view) == VIEW_KEYS
        assert view["seat"] == seat
        json.dumps(view)
        assert set(match.view(seat)) == VIEW_KEYS | {"match"}
        assert set(match.view(seat)["match"]) == {"hand_index", "dealer", "score", "carry", "target"}
    mover = match.hand.to_move
    assert match.hand.view(mover)["legal_actions"] == match.hand.legal_actions()
    assert match.hand.view(1 - mover)["legal_actions"] == []


def test_legal_actions_follow_the_canonical_order() -> None:
    order = ["exchange", "close", "draw", "meld C", "meld D", "meld H", "meld S", "declare", "pass"]
    rank = {a: i for i, a in enumerate(order)}
    rank.update({f"play {c}": len(order) + i for i, c in enumerate(CARD_NAMES)})
    rng = random.Random(0)
    for seed in range(200):
        hand = Hand.deal_seeded(seed, seed % 2)
        while not hand.is_over:
            legal = hand.legal_actions()
            assert legal == sorted(legal, key=rank.__getitem__) and len(legal) >= 2
            hand.apply(rng.choice(legal))


def test_record_lists_only_the_actions_passed_to_apply() -> None:
    hand = Hand.deal_seeded(9, 1)
    applied = []
    rng = random.Random(2)
    while not hand.is_over:
        action = rng.choice(hand.legal_actions())
        hand.apply(action)
        applied.append(action)
    record = hand.record()
    assert record == {"rules": {}, "deck": list(hand.deck), "dealer": 1, "actions": applied}


def test_replay_rejects_a_bad_record() -> None:
    hand = Hand.deal_seeded(9, 1)
    record = hand.record()
    record["actions"] = ["play AC", "play AC"]
    with pytest.raises(IllegalAction, match="action 0|action 1"):
        Hand.replay(record)
    with pytest.raises(IllegalAction, match="bad hand record"):
        Hand.replay({"deck": ["AC"], "dealer": 0, "actions": []})


def test_bad_decks_are_value_errors() -> None:
    with pytest.raises(ValueError, match="24"):
        Hand.deal(["AC"] * 3)
    with pytest.raises(ValueError, match="duplicate"):
        Hand.deal(list(CARD_NAMES[:23]) + ["AC"])
    with pytest.raises(ValueError, match="unknown card"):
        Hand.deal(list(CARD_NAMES[:23]) + ["1X"])
    with pytest.raises(ValueError, match="dealer"):
        Hand.deal(list(CARD_NAMES), dealer=2)


def test_match_apply_returns_the_result_when_a_hand_ends_and_deals_the_next() -> None:
    match = Match(Rules(), seed=1)
    first_dealer = match.hand.dealer
    result = match.apply("declare")  # false declaration: the dealer wins 3
    assert result is not None and result.winner == first_dealer and result.game_points == 3
    assert match.score[first_dealer] == 3 and match.hand_index == 1
    assert match.hand.dealer == 1 - first_dealer  # alternate
    assert match.results == [result] and len(match.records) == 1


def test_match_over_refuses_actions() -> None:
    match = Match(Rules(match_target=1), seed=1)
    match.apply("declare")
    assert match.is_over and match.winner is not None and match.to_move is None
    with pytest.raises(IllegalAction, match="match is over"):
        match.apply("declare")


def test_organiser_events_name_every_card_and_otherwise_match_the_views() -> None:
    from arena.engine.view import organiser_events

    hand = Hand.deal_seeded(12, 0)
    rng = random.Random(5)
    while not hand.is_over:
        hand.apply(rng.choice(hand.legal_actions()))
    full = organiser_events(hand)
    seen = [hand.view(0)["events"], hand.view(1)["events"]]
    assert len(full) == len(seen[0]) == len(seen[1])
    for event, mine, theirs in zip(full, *seen):
        if event["type"] == "draw":
            assert event["card"] is not None and event["card"] in (mine["card"], theirs["card"])
        else:
            assert event == mine == theirs
