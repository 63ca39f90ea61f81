"""Encode and decode protocol messages (orjson), and builders for each side of the link.

Decoding untrusted bytes either returns a typed message or raises ``ProtocolError`` whose
``code`` is the fault kind to record (``malformed``, ``protocol``, ``disconnect``). No other
exception escapes the ``parse_*`` functions. The builders are for trusted input: they raise
``ValueError`` on arguments that would make a message the schema forbids.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import orjson

from .errors import DISCONNECT, MALFORMED, PROTOCOL, REJECT_REASONS, ProtocolError
from .messages import (
    ARENA_TYPES,
    BOT_TYPES,
    FAULT_KINDS,
    MAX_GAMES_LIMIT,
    MAX_MESSAGE_BYTES,
    PROTOCOL_MAJOR,
    PROTOCOL_VERSION,
    MATCH_KEYS,
    VIEW_KEYS,
    ArenaMessage,
    BotMessage,
    HandOver,
    Hello,
    MatchOver,
    Message,
    Reject,
    Reply,
    Shutdown,
    Welcome,
    reply_dict,
    request_dict,
)

_MAJOR = str(PROTOCOL_MAJOR)


def encode(message: Message) -> bytes:
    """The wire form of a message: one UTF-8 JSON object."""
    return _capped(orjson.dumps(message.to_dict()), type(message).__name__)


def _capped(data: bytes, kind: str) -> bytes:
    """``data``, unless it is over the size cap (``ValueError``)."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise ValueError(f"{kind} is {len(data)} bytes, over the {MAX_MESSAGE_BYTES} cap")
    return data


def _load(data: bytes) -> dict[str, Any]:
    """Untrusted bytes -> a JSON object with a ``v`` of our major version and a string ``type``."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise ProtocolError(DISCONNECT, f"message of {len(data)} bytes is over the {MAX_MESSAGE_BYTES} cap")
    try:
        msg = orjson.loads(data)
    except (ValueError, RecursionError) as exc:  # orjson.JSONDecodeError is a ValueError
        raise ProtocolError(MALFORMED, f"not JSON: {exc}") from None
    if type(msg) is not dict:
        raise ProtocolError(MALFORMED, f"not a JSON object but {type(msg).__name__}")
    version = msg.get("v")
    if version != PROTOCOL_VERSION:  # the usual "1.0" needs no closer look
        _check_version(version)
    if type(msg.get("type")) is not str:
        raise ProtocolError(MALFORMED, "'type' must be a string")
    return msg


def _check_version(version: object) -> None:
    """Accept any "1.minor"; raise for anything else."""
    if type(version) is not str:
        raise ProtocolError(MALFORMED, "'v' must be a version string like \"1.0\"")
    major, dot, minor = version.partition(".")
    if not (dot and len(version) <= 16 and (major + minor).isascii() and major.isdigit() and minor.isdigit()):
        raise ProtocolError(MALFORMED, f"'v' must look like \"1.0\", got {version[:20]!r}")
    if major != _MAJOR:
        raise ProtocolError(
            PROTOCOL, f"protocol version {version} is not {PROTOCOL_MAJOR}.x", reason="version_mismatch"
        )


def _parse(data: bytes, mine: Mapping[str, type[Message]], theirs: Mapping[str, object]) -> Message:
    msg = _load(data)
    kind = mine.get(msg["type"])
    if kind is None:
        code = PROTOCOL if msg["type"] in theirs else MALFORMED
        raise ProtocolError(code, f"unexpected message type {msg['type'][:40]!r} from this side")
    try:
        return kind.from_dict(msg)
    except (KeyError, TypeError, ValueError, RecursionError) as exc:  # a gap in the hand checks
        raise ProtocolError(MALFORMED, f"{msg['type']!r} message: {type(exc).__name__}") from None


def parse_bot_message(data: bytes) -> BotMessage:
    """Bytes a bot sent -> ``Hello`` or ``Reply``; an arena-only type is a ``protocol`` error."""
    msg = _parse(data, BOT_TYPES, ARENA_TYPES)
    assert isinstance(msg, (Hello, Reply))
    return msg


def parse_hello(data: bytes) -> Hello:
    """The first message of a bot; anything else is a ``protocol`` error (out of turn)."""
    msg = parse_bot_message(data)
    if not isinstance(msg, Hello):
        raise ProtocolError(PROTOCOL, "expected 'hello' first, got 'action'")
    return msg


def parse_reply(data: bytes) -> Reply:
    """A bot's answer to a request; a ``hello`` after the handshake is a ``protocol`` error.

    Whether ``seq``/``game_id`` match an outstanding request is the caller's check: a
    mismatch means the reply is dropped and counted, not a fault.
    """
    msg = _parse(data, BOT_TYPES, ARENA_TYPES)
    if type(msg) is not Reply:
        raise ProtocolError(PROTOCOL, "'hello' sent again after the handshake")
    return msg


def parse_arena_message(data: bytes) -> ArenaMessage:
    """Bytes from the arena -> a typed message (used by bots)."""
    msg = _parse(data, ARENA_TYPES, BOT_TYPES)
    assert not isinstance(msg, (Hello, Reply))
    return msg


# --- builders, bot side --------------------------------------------------------------------


def make_hello(token: str, name: str, version: str, *, max_games: int = 1) -> bytes:
    """The bot's ``hello``."""
    if not 1 <= max_games <= MAX_GAMES_LIMIT:
        raise ValueError(f"max_games must be in [1, {MAX_GAMES_LIMIT}], not {max_games}")
    return encode(Hello(token, name, version, max_games))


def make_action(seq: int, game_id: str, action: str) -> bytes:
    """The bot's reply to request ``seq`` of ``game_id``."""
    data = orjson.dumps(reply_dict(seq, game_id, action))  # no Reply object: the per-decision path
    return data if len(data) <= MAX_MESSAGE_BYTES else _capped(data, "Reply")


# --- builders, arena side ------------------------------------------------------------------


def make_welcome(max_games: int, *, rules: Mapping[str, Any] | None = None) -> bytes:
    """Accept a hello; ``max_games`` is how many games at once the arena will use (<= asked)."""
    if not 1 <= max_games <= MAX_GAMES_LIMIT:
        raise ValueError(f"max_games must be in [1, {MAX_GAMES_LIMIT}], not {max_games}")
    return encode(Welcome(max_games, MAX_MESSAGE_BYTES, dict(rules or {})))


def make_reject(reason: str, detail: str = "") -> bytes:
    """Refuse a hello. ``reason`` is one of ``REJECT_REASONS``."""
    if reason not in REJECT_REASONS:
        raise ValueError(f"reject reason must be one of {REJECT_REASONS}, not {reason!r}")
    return encode(Reject(reason, detail[:1024]))


def _check_view(view: Mapping[str, Any]) -> None:
    # The leak guard: a view on the wire has exactly the contract's keys, nothing more.
    if view.keys() != VIEW_KEYS:
        extra, missing = sorted(view.keys() - VIEW_KEYS), sorted(VIEW_KEYS - view.keys())
        raise ValueError(f"a view must have exactly the contract's keys; extra {extra}, missing {missing}")
    match = view["match"]
    if (type(match) is not dict and not isinstance(match, Mapping)) or match.keys() != MATCH_KEYS:  # dict: no ABC check
        keys = sorted(match.keys()) if isinstance(match, Mapping) else type(match).__name__
        raise ValueError(f"a view's 'match' must have exactly the keys {sorted(MATCH_KEYS)}, not {keys}")


def make_request(
    seq: int,
    game_id: str,
    seat: int,
    view: dict[str, Any],
    legal_actions: list[str],
    time_limit_ms: int,
    bank_ms: int,
) -> bytes:
    """A decision request. ``view`` is ``Match.view(seat)``; ``legal_actions`` equals its list."""
    _check_view(view)
    data = orjson.dumps(request_dict(seq, game_id, seat, view, legal_actions, time_limit_ms, bank_ms))  # no Request object
    return data if len(data) <= MAX_MESSAGE_BYTES else _capped(data, "Request")


def make_hand_over(game_id: str, seat: int, view: dict[str, Any], score: Sequence[int], carry: int) -> bytes:
    """A hand ended. ``view`` is the finished hand's final view for ``seat`` (with ``match`` as
    during the hand, so ``view["result"]`` is set); ``score``/``carry`` are the match's after it.
    """
    _check_view(view)
    result = view["result"]
    if not isinstance(result, dict):
        raise ValueError("make_hand_over needs the final view of a finished hand (result is None)")
    return encode(HandOver(game_id, seat, result, view, (score[0], score[1]), carry))


def make_match_over(
    game_id: str,
    seat: int,
    score: Sequence[int],
    winner: int | None,
    *,
    hands: int,
    forfeit: bool = False,
    fault: Mapping[str, Any] | None = None,
) -> bytes:
    """The match ended. ``fault`` is None or ``{"seat": 0|1|None, "kind": ..., "detail": str}``;
    ``winner`` is None only for a void match (a ``harness`` fault)."""
    if fault is not None and fault.get("kind") not in FAULT_KINDS:
        raise ValueError(f"fault kind must be one of {FAULT_KINDS}, not {fault.get('kind')!r}")
    fault_obj = None if fault is None else {
        "seat": fault.get("seat"), "kind": fault["kind"], "detail": str(fault.get("detail", ""))[:1024]
    }
    return encode(MatchOver(game_id, seat, (score[0], score[1]), winner, hands, forfeit, fault_obj))


def make_shutdown(reason: str = "") -> bytes:
    """Tell a bot process to exit."""
    return encode(Shutdown(reason[:1024]))
