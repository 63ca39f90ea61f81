"""The codec: round trips, builders, and every way untrusted bytes can be wrong."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import Match, Rules
from protocol import (
    ACTIONS,
    MAX_MESSAGE_BYTES,
    HandOver,
    Hello,
    MatchOver,
    Message,
    ProtocolError,
    Reject,
    Reply,
    Request,
    Shutdown,
    Welcome,
    encode,
    make_action,
    make_hand_over,
    make_hello,
    make_match_over,
    make_reject,
    make_request,
    make_shutdown,
    make_welcome,
    parse_arena_message,
    parse_bot_message,
    parse_hello,
    parse_reply,
)

pytestmark = pytest.mark.unit


def engine_view(seed: int = 1) -> dict[str, Any]:
    match = Match(Rules(), seed=seed)
    return match.view(match.hand.to_move)


def final_view() -> dict[str, Any]:
    match = Match(Rules(), seed=2)
    while True:
        hand, view = match.hand, match.view(match.hand.to_move)
        if match.apply(view["legal_actions"][-1]) is not None:
            final = hand.view(0)
            final["match"] = view["match"]
            return final


def msg(**fields: Any) -> bytes:
    return orjson.dumps({"v": "1.0", **fields})


REPLY = {"type": "action", "seq": 7, "game_id": "m1", "action": "play AH"}
HELLO = {"type": "hello", "token": "t0k", "name": "b", "version": "1", "capabilities": {"max_games": 2}}


def test_action_table_is_the_contracts() -> None:
    assert len(ACTIONS) == 24 + 4 + 5
    assert {"play AH", "play 9S", "meld C", "exchange", "close", "draw", "declare", "pass"} <= ACTIONS


def examples() -> list[Message]:
    view = engine_view()
    final = final_view()
    return [
        Hello("3f9a", "random", "1.0", 16),
        Reply(7, "m1", "play AH"),
        Welcome(4, MAX_MESSAGE_BYTES, {"match_target": 11}),
        Reject("version_mismatch", "2.0 is not 1.x"),
        Request(7, "m1", view["seat"], view, view["legal_actions"], 1000, 9000),
        HandOver("m1", 0, final["result"], final, (0, 2), 0),
        MatchOver("m1", 1, (7, 3), 0, 5, True, {"seat": 1, "kind": "timeout", "detail": "late"}),
        MatchOver("m2", 0, (0, 0), None, 0, False, None),
        Shutdown("done"),
    ]


@pytest.mark.parametrize("message", examples(), ids=lambda m: type(m).__name__)
def test_round_trip(message: Message) -> None:
    data = encode(message)
    parse = parse_bot_message if isinstance(message, (Hello, Reply)) else parse_arena_message
    assert parse(data) == message


def test_builders_make_the_same_bytes_as_the_types() -> None:
    view, final = engine_view(), final_view()
    fault = {"seat": 0, "kind": "crash", "detail": "exit code 1"}
    assert make_hello("t", "n", "1", max_games=3) == encode(Hello("t", "n", "1", 3))
    assert make_action(3, "g", "pass") == encode(Reply(3, "g", "pass"))
    assert make_welcome(2, rules={"must_head": False}) == encode(Welcome(2, MAX_MESSAGE_BYTES, {"must_head": False}))
    assert make_welcome(1) == encode(Welcome(1))
    assert make_reject("bad_token") == encode(Reject("bad_token", ""))
    assert make_request(5, "g", view["seat"], view, view["legal_actions"], 10, 20) == encode(
        Request(5, "g", view["seat"], view, view["legal_actions"], 10, 20)
    )
    assert make_hand_over("g", 0, final, [1, 0], 1) == encode(HandOver("g", 0, final["result"], final, (1, 0), 1))
    assert make_match_over("g", 1, (1, 7), 1, hands=4, forfeit=True, fault=fault) == encode(
        MatchOver("g", 1, (1, 7), 1, 4, True, fault)
    )
    assert make_shutdown() == encode(Shutdown(""))


def test_parse_hello_and_reply_know_their_turn() -> None:
    hello = parse_hello(msg(**HELLO))
    assert hello == Hello("t0k", "b", "1", 2, "1.0")
    assert parse_reply(msg(**REPLY)) == Reply(7, "m1", "play AH")
    with pytest.raises(ProtocolError) as err:
        parse_hello(msg(**REPLY))
    assert err.value.code == "protocol" and err.value.reason == "protocol"
    with pytest.raises(ProtocolError) as err:
        parse_reply(msg(**HELLO))
    assert err.value.code == "protocol"


def test_minor_versions_and_unknown_fields_are_accepted() -> None:
    data = orjson.dumps({"v": "1.7", **HELLO, "capabilities": {"max_games": 2, "ponder": True}, "extra": [1]})
    assert parse_hello(data).v == "1.7"
    assert parse_hello(msg(**{**HELLO, "capabilities": {}})).max_games == 1
    assert parse_reply(msg(**REPLY, comment="hi")).seq == 7
    seq = parse_reply(msg(**{**REPLY, "seq": 7.0})).seq  # an integer, as JSON Schema counts them
    assert seq == 7 and type(seq) is int


def test_wrong_major_version_is_a_protocol_error_with_reason_version_mismatch() -> None:
    for parse in (parse_hello, parse_reply, parse_arena_message):
        with pytest.raises(ProtocolError) as err:
            parse(orjson.dumps({"v": "2.0", "type": "hello", "whatever": 1}))
        assert (err.value.code, err.value.reason) == ("protocol", "version_mismatch")


DEEP = b'{"v": "1.0", "type": "action", "seq": 1, "game_id": "g", "action": ' + b"[" * 1000 + b"]" * 1000 + b"}"

BAD_REPLIES: list[tuple[str, bytes, str]] = [
    ("empty", b"", "malformed"),
    ("not json", b"play AH", "malformed"),
    ("bad utf-8", b'{"v": "1.0", "type": "\xff"}', "malformed"),
    ("trailing garbage", msg(**REPLY) + b"x", "malformed"),
    ("NaN", b'{"v": "1.0", "type": "action", "seq": NaN}', "malformed"),
    ("array", b"[1, 2]", "malformed"),
    ("string", b'"action"', "malformed"),
    ("null", b"null", "malformed"),
    ("deep and oversize", b"[" * 100_000 + b"]" * 100_000, "disconnect"),
    ("deep under the cap", b"[" * 30_000 + b"]" * 30_000, "malformed"),
    ("deep field", DEEP, "malformed"),
    ("oversize", b'{"v": "1.0", "pad": "' + b"x" * MAX_MESSAGE_BYTES + b'"}', "disconnect"),
    ("no v", orjson.dumps(REPLY), "malformed"),
    ("v number", orjson.dumps({**REPLY, "v": 1}), "malformed"),
    ("v word", orjson.dumps({**REPLY, "v": "one"}), "malformed"),
    ("v without minor", orjson.dumps({**REPLY, "v": "1"}), "malformed"),
    ("v major 0", orjson.dumps({**REPLY, "v": "0.9"}), "protocol"),
    ("no type", msg(seq=1, game_id="g", action="pass"), "malformed"),
    ("type number", msg(**{**REPLY, "type": 3}), "malformed"),
    ("unknown type", msg(**{**REPLY, "type": "move"}), "malformed"),
    ("arena type", msg(**{**REPLY, "type": "request"}), "protocol"),
    ("hello again", msg(**HELLO), "protocol"),
    ("missing seq", msg(type="action", game_id="g", action="pass"), "malformed"),
    ("seq string", msg(**{**REPLY, "seq": "7"}), "malformed"),
    ("seq bool", msg(**{**REPLY, "seq": True}), "malformed"),
    ("seq fraction", msg(**{**REPLY, "seq": 7.5}), "malformed"),
    ("seq negative", msg(**{**REPLY, "seq": -1}), "malformed"),
    ("seq huge", msg(**REPLY)[:-1] + b', "seq": 123456789012345678901234567890}', "malformed"),
    ("missing game_id", msg(type="action", seq=1, action="pass"), "malformed"),
    ("game_id number", msg(**{**REPLY, "game_id": 5}), "malformed"),
    ("game_id empty", msg(**{**REPLY, "game_id": ""}), "malformed"),
    ("game_id long", msg(**{**REPLY, "game_id": "g" * 65}), "malformed"),
    ("missing action", msg(type="action", seq=1, game_id="g"), "malformed"),
    ("action not a string", msg(**{**REPLY, "action": ["play AH"]}), "malformed"),
    ("action misspelt", msg(**{**REPLY, "action": "play ah"}), "malformed"),
    ("action garbage", msg(**{**REPLY, "action": "fly away"}), "malformed"),
    ("action no card", msg(**{**REPLY, "action": "play"}), "malformed"),
]


@pytest.mark.parametrize(("data", "code"), [c[1:] for c in BAD_REPLIES], ids=[c[0] for c in BAD_REPLIES])
def test_bad_replies_raise_protocol_error_with_the_fault_code(data: bytes, code: str) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_reply(data)
    assert err.value.code == code


BAD_HELLOS: list[tuple[str, dict[str, Any], str]] = [
    ("token with space", {"token": "a b"}, "malformed"),
    ("token empty", {"token": ""}, "malformed"),
    ("token not ascii", {"token": "tök"}, "malformed"),
    ("token too long", {"token": "t" * 256}, "malformed"),
    ("no name", {"name": None}, "malformed"),
    ("version number", {"version": 1}, "malformed"),
    ("no capabilities", {"capabilities": None}, "malformed"),
    ("capabilities list", {"capabilities": [1]}, "malformed"),
    ("max_games zero", {"capabilities": {"max_games": 0}}, "malformed"),
    ("max_games string", {"capabilities": {"max_games": "2"}}, "malformed"),
    ("max_games huge", {"capabilities": {"max_games": 10**6}}, "malformed"),
]


@pytest.mark.parametrize(("change", "code"), [c[1:] for c in BAD_HELLOS], ids=[c[0] for c in BAD_HELLOS])
def test_bad_hellos(change: dict[str, Any], code: str) -> None:
    fields = {k: v for k, v in {**HELLO, **change}.items() if v is not None}
    with pytest.raises(ProtocolError) as err:
        parse_hello(msg(**fields))
    assert (err.value.code, err.value.reason) == (code, "malformed")


def test_bad_arena_messages() -> None:
    view = engine_view()
    good = orjson.loads(make_request(1, "g", view["seat"], view, view["legal_actions"], 1, 2))
    broken_view = {**good, "view": {k: v for k, v in view.items() if k != "totals"}}
    cases = [
        (broken_view, "malformed"),
        ({**good, "view": {**view, "match": None}}, "malformed"),
        ({**good, "view": {**view, "match": {k: v for k, v in view["match"].items() if k != "carry"}}}, "malformed"),
        ({**good, "view": []}, "malformed"),
        ({**good, "legal_actions": ["dance"]}, "malformed"),
        ({**good, "seat": 2}, "malformed"),
        ({**good, "time_limit_ms": -5}, "malformed"),
        ({**good, "type": "action"}, "protocol"),
        ({"v": "1.0", "type": "match_over", "game_id": "g", "seat": 0, "score": [1], "winner": 0,
          "hands": 1, "forfeit": False, "fault": None}, "malformed"),
        ({"v": "1.0", "type": "match_over", "game_id": "g", "seat": 0, "score": [1, 0], "winner": 0,
          "hands": 1, "forfeit": 0, "fault": None}, "malformed"),
        ({"v": "1.0", "type": "welcome", "max_games": 0, "max_message_bytes": 1, "rules": {}}, "malformed"),
    ]
    for data, code in cases:
        with pytest.raises(ProtocolError) as err:
            parse_arena_message(orjson.dumps(data))
        assert err.value.code == code, data


def test_builders_refuse_what_the_contract_forbids() -> None:
    view = engine_view()
    with pytest.raises(ValueError, match="extra \\['deck'\\]"):
        make_request(1, "g", 0, {**view, "deck": ["AH"]}, view["legal_actions"], 1, 1)
    with pytest.raises(ValueError, match="missing \\['match'\\]"):
        make_request(1, "g", 0, {k: v for k, v in view.items() if k != "match"}, view["legal_actions"], 1, 1)
    leaky_match = {**view["match"], "seed": 42}
    with pytest.raises(ValueError, match="'match' must have exactly the keys"):
        make_request(1, "g", 0, {**view, "match": leaky_match}, view["legal_actions"], 1, 1)
    with pytest.raises(ValueError, match="'match' must have exactly the keys"):
        make_request(1, "g", 0, {**view, "match": None}, view["legal_actions"], 1, 1)
    with pytest.raises(ValueError, match="finished hand"):
        make_hand_over("g", 0, view, (0, 0), 0)
    with pytest.raises(ValueError, match="reject reason"):
        make_reject("go away")
    with pytest.raises(ValueError, match="fault kind"):
        make_match_over("g", 0, (0, 7), 1, hands=3, forfeit=True, fault={"seat": 0, "kind": "rude"})
    with pytest.raises(ValueError, match="max_games"):
        make_welcome(0)
    with pytest.raises(ValueError, match="max_games"):
        make_hello("t", "n", "1", max_games=2000)
    with pytest.raises(ValueError, match="over the 65536 cap"):
        encode(Shutdown("x" * MAX_MESSAGE_BYTES))
    assert len(make_shutdown("x" * MAX_MESSAGE_BYTES)) < 1100  # the builder cuts the text
    with pytest.raises(ValueError, match="ProtocolError code"):
        ProtocolError("oops", "no such code")


def test_protocol_error_is_stable() -> None:
    err = ProtocolError("protocol", "v2", reason="version_mismatch")
    assert (err.code, err.reason, str(err)) == ("protocol", "version_mismatch", "v2")
    assert repr(err) == "ProtocolError('protocol', 'v2', reason='version_mismatch')"
    assert ProtocolError("disconnect", "big").reason == "protocol"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=30,
)
near_replies = st.fixed_dictionaries(
    {},
    optional={
        "v": st.sampled_from(["1.0", "1.3", "2.0", "1", 1]) | json_values,
        "type": st.sampled_from(["action", "hello", "request", "x"]) | json_values,
        "seq": st.integers(-3, 2**64 - 1) | json_values,
        "game_id": st.text(max_size=70) | json_values,
        "action": st.sampled_from(sorted(ACTIONS)) | json_values,
        "token": st.text(max_size=5) | json_values,
        "name": st.text(max_size=5) | json_values,
        "version": st.text(max_size=5) | json_values,
        "capabilities": st.fixed_dictionaries({}, optional={"max_games": st.integers(-1, 2000)}) | json_values,
    },
)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_bytes_only_ever_raise_protocol_error(data: bytes) -> None:
    for parse in (parse_bot_message, parse_arena_message):
        try:
            parse(data)
        except ProtocolError as err:
            assert err.code in ("malformed", "protocol", "disconnect")


@settings(max_examples=500, deadline=None)
@given(json_values | near_replies)
def test_fuzz_json_only_ever_raises_protocol_error(value: Any) -> None:
    data = orjson.dumps(value)
    for parse in (parse_bot_message, parse_arena_message):
        try:
            message = parse(data)
        except ProtocolError as err:
            assert err.code in ("malformed", "protocol")
        else:
            assert parse(encode(message)) == message
