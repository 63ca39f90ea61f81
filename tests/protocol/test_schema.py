"""schema.json: it is valid, PROTOCOL.md's examples and everything the builders make match it,
and it agrees with the codec's hand-written checks."""

from __future__ import annotations

import random
import re
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import Match, Rules
from protocol import (
    ACTIONS,
    ProtocolError,
    make_action,
    make_hand_over,
    make_hello,
    make_match_over,
    make_reject,
    make_request,
    make_shutdown,
    make_welcome,
    parse_bot_message,
)

from .conftest import REPO
from .test_codec import BAD_REPLIES

pytestmark = pytest.mark.unit

Validator = jsonschema.Draft202012Validator
ALL_TYPES = {"hello", "action", "welcome", "reject", "request", "hand_over", "match_over", "shutdown"}


def doc_examples() -> list[dict[str, Any]]:
    text = (REPO / "protocol" / "PROTOCOL.md").read_text()
    return [orjson.loads(block) for block in re.findall(r"```json\n(.*?)```", text, re.S)]


def test_every_message_type_has_a_valid_example_in_protocol_md(validator: Validator) -> None:
    examples = doc_examples()
    for example in examples:
        validator.validate(example)
    assert {e["type"] for e in examples} == ALL_TYPES


def test_every_type_has_a_definition(validator: Validator) -> None:
    assert ALL_TYPES <= validator.schema["$defs"].keys()
    assert {ref["$ref"].rsplit("/", 1)[1] for ref in validator.schema["oneOf"]} == ALL_TYPES


def test_builder_output_matches_the_schema(validator: Validator) -> None:
    match = Match(Rules(), seed=5)
    view = match.view(match.hand.to_move)
    final = dict(view, to_move=None, legal_actions=[], result={
        "winner": None, "game_points": 0, "reason": "tie", "totals": [65, 65], "tricks": [6, 6]})
    messages = [
        make_hello("a1b2", "random", "1.0", max_games=16),
        make_action(1, "m1", "declare"),
        make_welcome(3, rules={"match_target": 11}),
        *(make_reject(reason, "why") for reason in ("version_mismatch", "bad_token", "malformed", "protocol")),
        make_request(1, "m1", view["seat"], view, view["legal_actions"], 1000, 10_000),
        make_hand_over("m1", 1, final, (2, 3), 1),
        make_match_over("m1", 0, (7, 2), 0, hands=5),
        make_match_over("m1", 0, (7, 2), 1, hands=5, forfeit=True, fault={"seat": 0, "kind": "illegal", "detail": "x"}),
        make_match_over("m1", 0, (0, 0), None, hands=0, forfeit=False, fault={"seat": None, "kind": "harness"}),
        make_shutdown(),
    ]
    for data in messages:
        validator.validate(orjson.loads(data))


def test_every_view_of_seeded_random_matches_matches_the_schema(validator: Validator) -> None:
    """Requests and hand_overs for both seats over whole matches (the exact-keys guard too)."""
    seq = 0
    for seed in range(6):
        rng, match = random.Random(seed), Match(Rules(), seed=seed)
        while not match.is_over:
            hand, seat = match.hand, match.hand.to_move
            views = [match.view(0), match.view(1)]
            seq += 1
            view = views[seat]
            validator.validate(orjson.loads(make_request(seq, "g", seat, view, view["legal_actions"], 5, 5)))
            validator.validate(orjson.loads(make_request(seq, "g", 1 - seat, views[1 - seat], ["draw", "pass"], 5, 5)))
            if match.apply(rng.choice(view["legal_actions"])) is not None:
                for s in (0, 1):
                    final = dict(hand.view(s), match=views[s]["match"])
                    validator.validate(orjson.loads(make_hand_over("g", s, final, match.score, match.carry)))
        validator.validate(orjson.loads(make_match_over("g", 0, match.score, match.winner, hands=len(match.results))))


def test_the_schema_refuses_what_the_codec_refuses(validator: Validator) -> None:
    for name, data, _ in BAD_REPLIES:
        if name == "hello again":  # a valid hello; only out of turn
            continue
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            continue
        try:
            valid = validator.is_valid(value)
        except RecursionError:  # jsonschema cannot even repr the deep case; it does not pass
            valid = False
        assert not valid, name


def test_the_schema_refuses_a_leaky_view(validator: Validator) -> None:
    match = Match(Rules(), seed=1)
    view = match.view(match.hand.to_move)
    request = orjson.loads(make_request(1, "g", view["seat"], view, view["legal_actions"], 1, 1))
    assert validator.is_valid(request)
    request["view"]["deck"] = ["AH"]
    assert not validator.is_valid(request)


bot_fields = st.fixed_dictionaries(
    {},
    optional={
        "v": st.sampled_from(["1.0", "1.12", "2.0", "1", "01.0", "1.x", "\u0661.0", 1]),
        "type": st.sampled_from(["action", "hello", "request", "x"]),
        "seq": st.sampled_from([0, 1, 2**53 - 1, 2**53, -1, 1.0, "1", True, None]),
        "game_id": st.text(max_size=66) | st.integers(-5, 5),
        "action": st.sampled_from(sorted(ACTIONS)) | st.text(max_size=8),
        "token": st.text(max_size=4) | st.sampled_from(["a" * 255, "a" * 256, "tok-1"]),
        "name": st.text(max_size=66),
        "version": st.text(max_size=3) | st.integers(-5, 5),
        "capabilities": st.fixed_dictionaries(
            {}, optional={"max_games": st.sampled_from([0, 1, 1024, 1025, "2", 2.0])}
        ) | st.lists(st.integers(-5, 5), max_size=1),
    },
)


@settings(max_examples=500, deadline=None)
@given(bot_fields)
def test_codec_and_schema_agree_on_bot_messages(validator: Validator, value: dict[str, Any]) -> None:
    """Messages with only known fields: the hand checks accept exactly what the schema does."""
    try:
        parse_bot_message(orjson.dumps(value))
        accepted = True
    except ProtocolError:
        accepted = False
    if value.get("type") == "hello":  # a hello carries no action fields, an action no hello fields
        value = {k: v for k, v in value.items() if k not in ("seq", "game_id", "action")}
    elif value.get("type") == "action":
        value = {k: v for k, v in value.items() if k not in ("token", "name", "version", "capabilities")}
    assert accepted == validator.is_valid(value), value
