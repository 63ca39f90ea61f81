"""The records a refereed match leaves (arena/engine/records.py): their JSON forms, pickling, the pair's shape."""

from __future__ import annotations

import json
import pickle
import random

import pytest

from arena.engine import Match, Rules
from arena.engine.records import ChangedBot, Fault, FaultKind, HandRecord, MatchOutcome, PairOutcome, Think

pytestmark = pytest.mark.unit


def _match(seed: int, rules: Rules) -> Match:
    match = Match(rules, seed=seed)
    rng = random.Random(seed)
    while not match.is_over:
        match.apply(rng.choice(match.legal_actions()))
    return match


def _played(match_id: str, seed: int) -> MatchOutcome:
    match = _match(seed, Rules())
    return MatchOutcome(match_id=match_id, seed=seed, names=("a", "b"), rules=Rules(), winner=match.winner,
                        score=match.score, forfeit=False, void=False, results=tuple(match.results),
                        records=tuple(HandRecord.of(r, Rules()) for r in match.records), think_ms=(Think(0, 0, 1.25, 0.5), Think(1, 0, 2.0)),
                        faults=(Fault(FaultKind.TIMEOUT, 1, "b", "late", match_id=match_id, hand_index=0),))


def test_a_match_outcome_has_the_json_form_arena_match_prints() -> None:
    outcome = _played("m", 3)
    data = json.loads(json.dumps(outcome.to_dict()))
    assert data["names"] == ["a", "b"] and data["rules"] == {} and data["score"] == list(outcome.score)
    assert data["think_ms"] == [[0, 0, 1.25, 0.5], [1, 0, 2.0, None]]
    assert data["faults"][0]["kind"] == "timeout" and data["faults"][0]["hand_index"] == 0
    assert [r["winner"] for r in data["results"]] == [r.winner for r in outcome.results]
    assert data["records"] == _match(3, Rules()).records and data["interrupted"] is None


def test_pair_outcomes_survive_pickling_as_a_worker_returns_them() -> None:
    played = PairOutcome(4, (_played("p00004h0", 9), _played("p00004h1", 9)))
    refused = PairOutcome(5, changed=(ChangedBot(1, "missing"),))
    back = pickle.loads(pickle.dumps([played, refused]))
    assert back == [played, refused]
    thinks = back[0].outcomes[1].think_ms  # a Think equals a plain tuple: check the types too
    assert [type(t) for t in thinks] == [Think, Think] and thinks[1].cpu_ms is None and thinks[0].wall_ms == 1.25
    assert type(back[0].outcomes[0].faults[0]) is Fault and type(back[1].changed[0]) is ChangedBot


@pytest.mark.parametrize("halves, changed", [(0, ()), (1, ()), (3, ()), (2, (ChangedBot(0, "f"),))])
def test_a_pair_has_its_two_halves_or_names_its_changed_bots(halves: int, changed: tuple[ChangedBot, ...]) -> None:
    with pytest.raises(ValueError, match="pair 7: .* outcomes, expected"):
        PairOutcome(7, tuple(_played(f"h{i}", 1) for i in range(halves)), changed)


@pytest.mark.parametrize("profile", ["default", "santase"])
def test_a_hand_record_is_the_engines_record_typed_and_reads_back_from_json(profile: str) -> None:
    rules = Rules.profile(profile)
    for seed in range(5):
        for record in _match(seed, rules).records:
            typed = HandRecord.of(record, rules)
            assert typed.to_dict() == record and list(typed.to_dict()) == list(record)  # same keys, same order
            assert HandRecord.from_dict(json.loads(json.dumps(record))) == typed
            assert pickle.loads(pickle.dumps(typed)) == typed
