"""Replay data and behaviour counts on seeded engine matches (in-process, no bots)."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from arena.engine import Match, Rules
from arena.engine.records import HandRecord
from results.report.model import Behaviour, add_hand_behaviour, match_replay
from results.rows import HandRow
from tests.tournament.stores import match_row

pytestmark = pytest.mark.unit

NAMES = ("<b>north</b>", "south")


def play(seed: int, rules: Rules) -> Match:
    match = Match(rules, seed=seed)
    rng = random.Random(seed)
    while not match.is_over:
        match.apply(rng.choice(match.legal_actions()))
    return match


@pytest.mark.parametrize("profile", ["default", "santase"])
def test_every_step_accounts_for_all_24_cards_and_the_match_score_is_the_engines(profile: str) -> None:
    rules = Rules.profile(profile)
    kinds: Counter[str] = Counter()
    for seed in range(20):
        match = play(seed, rules)
        rows = [HandRow(0, i, r.winner, r.game_points, str(r.reason), *r.totals, *r.tricks, json.dumps(record))
                for i, (r, record) in enumerate(zip(match.results, match.records))]
        hands = match_replay(match_row(0, 0, (0, 1), match.winner, seed=seed), rows, NAMES)
        assert len(hands) == len(match.records)
        assert hands[-1]["score_after"] == list(match.score)
        for shown, record, result in zip(hands, match.records, match.results):
            assert shown["result"] == result.to_dict() and not shown["interrupted"]
            assert [s["action"] for s in shown["steps"][1:]] == record["actions"]
            for step in shown["steps"]:
                table = step["table"] or {}
                on_table = [c for c in (table.get("lead"), table.get("follow")) if c and not table.get("done")]
                held = step["hands"][0] + step["hands"][1]
                rest = step["stock"] + ([step["up"]] if step["up"] else []) + step["dead"]
                assert len(set(held + rest + on_table)) == len(held + rest + on_table)  # nothing shown twice
                assert not (step["closed"] and step["stock"]) and (step["closed"] or not step["dead"])
                played = 2 * sum(step["tricks_won"])
                assert len(held) + len(rest) + len(on_table) + played == 24
            log = [line for step in shown["steps"] for line in step["log"]]
            assert log[-1].startswith(NAMES[result.winner] if result.winner is not None else "the hand is a tie")
            kinds.update(line.split(" ", 2)[1] for line in log if not line.startswith("the hand"))
    assert kinds["exchanges"] and kinds["announces"] and kinds["closes"] and kinds["declares"]


def test_behaviour_counts_follow_the_records() -> None:
    counted = {0: Behaviour(), 1: Behaviour()}
    expected: Counter[str] = Counter()
    for seed in range(30):
        match = play(seed, Rules())
        for record, result in zip(match.records, match.results):
            add_hand_behaviour(HandRecord.of(record, Rules()), (0, 1), counted)
            for action in record["actions"]:  # none of these is ever forced, so each is in the record
                expected[action.split()[0]] += 1
            if result.winner is not None:
                expected[f"won{result.game_points}"] += 1
                expected["false"] += result.reason == "false_declaration"
    both = [counted[0], counted[1]]
    assert sum(b.closes for b in both) == expected["close"] > 0
    assert sum(b.marriages for b in both) == expected["meld"] > 0
    assert sum(b.exchanges for b in both) == expected["exchange"] > 0
    assert sum(b.declarations for b in both) == expected["declare"] > 0
    assert sum(b.false_declarations for b in both) == expected["false"]
    for points in (1, 2, 3):
        assert sum(b.wins_by_points[points] for b in both) == expected[f"won{points}"]
    assert all(b.closes_won <= b.closes for b in both)
