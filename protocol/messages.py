"""Message types of protocol 1.0, their wire form (``to_dict``) and hand-written shape checks.

Every message is one JSON object with ``"v"`` (protocol version, ``"major.minor"``) and
``"type"``. PROTOCOL.md is the normative description; ``schema.json`` says the same in
JSON Schema. The checks here are what the hot path runs instead of a schema validator: they
check what a receiver relies on and ignore unknown extra fields (minor versions may add some).

The message classes are plain slots dataclasses, not frozen ones: a frozen ``__init__`` costs
about four times as much, on the referee's per-decision path. Treat them as read-only values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .errors import MALFORMED, ProtocolError

PROTOCOL_VERSION = "1.0"
PROTOCOL_MAJOR = 1
MAX_MESSAGE_BYTES = 64 * 1024
MAX_GAMES_LIMIT = 1024
MAX_ID_CHARS = 64  # game_id, name and version strings
MAX_TOKEN_BYTES = 255  # a ZeroMQ routing identity is 1..255 bytes
MAX_SEQ = 2**53 - 1  # exact in every JSON implementation

SUITS = ("C", "D", "H", "S")
RANKS = ("A", "T", "K", "Q", "J", "9")
CARDS = tuple(rank + suit for suit in SUITS for rank in RANKS)
# Every well-formed action string (docs/architecture.md#engine-api). Legality is the referee's business.
ACTIONS = frozenset(
    ("exchange", "close", "draw", "declare", "pass")
    + tuple("meld " + suit for suit in SUITS)
    + tuple("play " + card for card in CARDS)
)

# The view table of protocol/PROTOCOL.md section 6, plus "match" (Match.view): exactly these keys.
VIEW_KEYS = frozenset(
    (
        "seat", "dealer", "to_move", "trump", "up_card", "stock_size", "closed", "closer",
        "trick_number", "hand", "opponent_hand_size", "opponent_known", "lead", "pending_meld",
        "tricks", "marriages", "trick_points", "tricks_won", "totals", "events",
        "legal_actions", "result", "match",
    )
)
# The "match" part of a view (Match.view): exactly these keys.
MATCH_KEYS = frozenset(("hand_index", "dealer", "score", "carry", "target"))
FAULT_KINDS = ("crash", "timeout", "malformed", "illegal", "disconnect", "protocol", "harness")


# --- field checks ------------------------------------------------------------------------


def _bad(msg: Mapping[str, Any], what: str) -> ProtocolError:
    kind = msg.get("type")
    return ProtocolError(MALFORMED, f"{kind if type(kind) is str else 'message'}: {what}")


def _integral(value: Any) -> int | None:
    """``value`` as an int if it is a JSON integer (``7`` or ``7.0``, as JSON Schema counts
    integers; never a bool), else None."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return None


def get_int(msg: Mapping[str, Any], key: str, lo: int = 0, hi: int = MAX_SEQ) -> int:
    """``msg[key]`` as an int in ``[lo, hi]``."""
    value = _integral(msg.get(key))
    if value is None or not lo <= value <= hi:
        raise _bad(msg, f"{key!r} must be an integer in [{lo}, {hi}]")
    return value


def get_str(msg: Mapping[str, Any], key: str, max_len: int = MAX_ID_CHARS, min_len: int = 1) -> str:
    """``msg[key]`` as a string of ``min_len`` to ``max_len`` characters."""
    value = msg.get(key)
    if type(value) is not str or not min_len <= len(value) <= max_len:
        raise _bad(msg, f"{key!r} must be a string of {min_len} to {max_len} characters")
    return value


def get_seat(msg: Mapping[str, Any], key: str, nullable: bool = False) -> int | None:
    """``msg[key]`` as a seat (0 or 1), or None if ``nullable``."""
    value = msg.get(key)
    if value is None and nullable:
        return None
    seat = _integral(value)
    if seat is None or seat not in (0, 1):
        raise _bad(msg, f"{key!r} must be a seat (0 or 1){' or null' if nullable else ''}")
    return seat


def get_pair(msg: Mapping[str, Any], key: str) -> tuple[int, int]:
    """``msg[key]`` as two non-negative ints, index = seat."""
    value = msg.get(key)
    if type(value) is list and len(value) == 2:
        first, second = _integral(value[0]), _integral(value[1])
        if first is not None and second is not None and first >= 0 and second >= 0:
            return first, second
    raise _bad(msg, f"{key!r} must be two non-negative integers")


def get_dict(msg: Mapping[str, Any], key: str, nullable: bool = False) -> dict[str, Any] | None:
    """``msg[key]`` as a JSON object (or None if ``nullable``)."""
    value = msg.get(key)
    if value is None and nullable:
        return None
    if type(value) is not dict:
        raise _bad(msg, f"{key!r} must be an object")
    return value


def get_view(msg: Mapping[str, Any]) -> dict[str, Any]:
    """``msg["view"]``: an object with at least the view keys, its ``match`` an object with at
    least the match keys (protocol/PROTOCOL.md section 6)."""
    view = get_dict(msg, "view")
    assert view is not None
    if not VIEW_KEYS <= view.keys():
        raise _bad(msg, f"'view' lacks {sorted(VIEW_KEYS - view.keys())}")
    match = view["match"]
    if type(match) is not dict:
        raise _bad(msg, "'view.match' must be an object")
    if not MATCH_KEYS <= match.keys():
        raise _bad(msg, f"'view.match' lacks {sorted(MATCH_KEYS - match.keys())}")
    return view


def get_actions(msg: Mapping[str, Any]) -> list[str]:
    """``msg["legal_actions"]``: a list of well-formed action strings."""
    value = msg.get("legal_actions")
    if type(value) is not list or not all(type(a) is str and a in ACTIONS for a in value):
        raise _bad(msg, "'legal_actions' must be a list of action strings")
    return value


# --- bot -> arena --------------------------------------------------------------------------


@dataclass(slots=True)
class Hello:
    """The bot's first message: who it is and what it can do."""

    token: str
    name: str
    version: str
    max_games: int = 1
    v: str = PROTOCOL_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": self.v, "type": "hello", "token": self.token, "name": self.name,
            "version": self.version, "capabilities": {"max_games": self.max_games},
        }

    @classmethod
    def from_dict(cls, msg: Mapping[str, Any]) -> Hello:
        caps = get_dict(msg, "capabilities")
        assert caps is not None
        max_games = get_int(caps, "max_games", 1, MAX_GAMES_LIMIT) if "max_games" in caps else 1
        token = get_str(msg, "token", MAX_TOKEN_BYTES)
        if not all("!" <= c <= "~" for c in token):
            raise _bad(msg, "'token' must be printable ASCII without spaces")
        return cls(token, get_str(msg, "name"), get_str(msg, "version"), max_games, msg["v"])


def reply_dict(seq: int, game_id: str, action: str, v: str = PROTOCOL_VERSION) -> dict[str, Any]:
    """The wire form of a ``Reply``, without making one (the bot SDK's per-decision path)."""
    return {"v": v, "type": "action", "seq": seq, "game_id": game_id, "action": action}


def request_dict(seq: int, game_id: str, seat: int, view: dict[str, Any], legal_actions: list[str],
                 time_limit_ms: int, bank_ms: int, v: str = PROTOCOL_VERSION) -> dict[str, Any]:
    """The wire form of a ``Request``, without making one (the conductor's per-decision path)."""
    return {
        "v": v, "type": "request", "seq": seq, "game_id": game_id, "seat": seat, "time_limit_ms": time_limit_ms,
        "bank_ms": bank_ms, "view": view, "legal_actions": legal_actions,
    }


@dataclass(slots=True)
class Reply:
    """The bot's answer to one request (wire type ``"action"``)."""

    seq: int
    game_id: str
    action: str
    v: str = PROTOCOL_VERSION

    def to_dict(self) -> dict[str, Any]:
        return reply_dict(self.seq, self.game_id, self.action, self.v)

    @classmethod
    def from_dict(cls, msg: Mapping[str, Any]) -> Reply:
        seq, game_id, action = msg.get("seq"), msg.get("game_id"), msg.get("action")
        if (  # the referee's per-decision path: one expression for a good reply
            type(seq) is int and 0 <= seq <= MAX_SEQ
            and type(game_id) is str and 0 < len(game_id) <= MAX_ID_CHARS
            and type(action) is str and action in ACTIONS
        ):
            return cls(seq, game_id, action, msg["v"])
        if type(action) is not str or action not in ACTIONS:
            shown = repr(action[:40]) if type(action) is str else type(action).__name__
            raise _bad(msg, f"'action' is not an action string: {shown}")
        return cls(get_int(msg, "seq"), get_str(msg, "game_id"), action, msg["v"])


# --- arena -> bot --------------------------------------------------------------------------


@dataclass(slots=True)
class Welcome:
    """The arena accepts the hello; the settings hold for the whole connection."""

    max_games: int
    max_message_bytes: int = MAX_MESSAGE_BYTES
    rules: dict[str, Any] = field(default_factory=dict)
    v: str = PROTOCOL_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": self.v, "type": "welcome", "max_games": self.max_games,
            "max_message_bytes": self.max_message_bytes, "rules": self.rules,
        }

    @classmethod
    def from_dict(cls, msg: Mapping[str, Any]) -> Welcome:
        rules = get_dict(msg, "rules")
        assert rules is not None
        return cls(
            get_int(msg, "max_games", 1, MAX_GAMES_LIMIT),
            get_int(msg, "max_message_bytes", 1, 2**31 - 1),
            rules,
            msg["v"],
        )


@dataclass(slots=True)
class Reject:
    """The arena refuses the hello and closes the connection."""

    reason: str
    detail: str = ""
    v: str = PROTOCOL_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {"v": self.v, "type": "reject", "reason": self.reason, "detail": self.detail}

    @classmethod
    def from_dict(cls, msg: Mapping[str, Any]) -> Reject:
        return cls(get_str(msg, "reason"), get_str(msg, "detail", 1024, 0), msg["v"])


@dataclass(slots=True)
class Request:
    """A decision request: the seat to move gets its view and legal actions."""

    seq: int
    game_id: str
    seat: int
    view: dict[str, Any]
    legal_actions: list[str]
    time_limit_ms: int
    bank_ms: int
    v: str = PROTOCOL_VERSION

    def to_dict(self) -> dict[str, Any]:
        return request_dict(self.seq, self.game_id, self.seat, self.view, self.legal_actions, self.time_limit_ms,
                            self.bank_ms, self.v)

    @classmethod
    def from_dict(cls, msg: Mapping[str, Any]) -> Request:
        seq, game_id, seat, view = msg.get("seq"), msg.get("game_id"), msg.get("seat"), msg.get("view")
        actions, limit, bank = msg.get("legal_actions"), msg.get("time_limit_ms"), msg.get("bank_ms")
        try:  # a bot's per-decision path: the checks below in one expression, for a good request
            if (
                type(seq) is int and 0 <= seq <= MAX_SEQ
                and type(game_id) is str and 0 < len(game_id) <= MAX_ID_CHARS
                and type(seat) is int and 0 <= seat <= 1
                and type(view) is dict and view.keys() >= VIEW_KEYS
                and type(match := view["match"]) is dict and match.keys() >= MATCH_KEYS
                and type(actions) is list and ACTIONS.issuperset(actions)
                and type(limit) is int and 0 <= limit <= MAX_SEQ and type(bank) is int and 0 <= bank <= MAX_SEQ
            ):
                return cls(seq, game_id, seat, view, actions, limit, bank, msg["v"])
        except TypeError:  # an unhashable legal action; the checks below say what is wrong
            pass
        seat = get_seat(msg, "seat")
        assert seat is not None
        return cls(
            get_int(msg, "seq"), get_str(msg, "game_id"), seat, get_view(msg), get_actions(msg),
            get_int(msg, "time_limit_ms"), get_int(msg, "bank_ms"), msg["v"],
        )


@dataclass(slots=True)
class HandOver:
    """A hand of the game ended: its result, the seat's final view, the score after it."""

    game_id: str
    seat: int
    result: dict[str, Any]
    view: dict[str, Any]
    score: tuple[int, int]
    carry: int
    v: str = PROTOCOL_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": self.v, "type": "hand_over", "game_id": self.game_id, "seat": self.seat,
            "result": self.result, "score": list(self.score), "carry": self.carry, "view": self.view,
        }

    @classmethod
    def from_dict(cls, msg: Mapping[str, Any]) -> HandOver:
        seat = get_seat(msg, "seat")
        result = get_dict(msg, "result")
        assert seat is not None and result is not None
        return cls(
            get_str(msg, "game_id"), seat, result, get_view(msg), get_pair(msg, "score"),
            get_int(msg, "carry"), msg["v"],
        )


@dataclass(slots=True)
class MatchOver:
    """The game (match) ended, normally or by forfeit; no more messages for this game_id."""

    game_id: str
    seat: int
    score: tuple[int, int]
    winner: int | None
    hands: int
    forfeit: bool = False
    fault: dict[str, Any] | None = None
    v: str = PROTOCOL_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": self.v, "type": "match_over", "game_id": self.game_id, "seat": self.seat,
            "score": list(self.score), "winner": self.winner, "hands": self.hands,
            "forfeit": self.forfeit, "fault": self.fault,
        }

    def summary(self) -> dict[str, Any]:
        """The fields a bot's ``on_match_over`` hook receives."""
        data = self.to_dict()
        del data["v"], data["type"]
        return data

    @classmethod
    def from_dict(cls, msg: Mapping[str, Any]) -> MatchOver:
        seat = get_seat(msg, "seat")
        assert seat is not None
        forfeit = msg.get("forfeit")
        if type(forfeit) is not bool:
            raise _bad(msg, "'forfeit' must be a boolean")
        return cls(
            get_str(msg, "game_id"), seat, get_pair(msg, "score"), get_seat(msg, "winner", True),
            get_int(msg, "hands"), forfeit, get_dict(msg, "fault", True), msg["v"],
        )


@dataclass(slots=True)
class Shutdown:
    """The arena is done with this bot process: it should exit now."""

    reason: str = ""
    v: str = PROTOCOL_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {"v": self.v, "type": "shutdown", "reason": self.reason}

    @classmethod
    def from_dict(cls, msg: Mapping[str, Any]) -> Shutdown:
        return cls(get_str(msg, "reason", 1024, 0) if "reason" in msg else "", msg["v"])


BotMessage = Hello | Reply
ArenaMessage = Welcome | Reject | Request | HandOver | MatchOver | Shutdown
Message = BotMessage | ArenaMessage

BOT_TYPES: dict[str, type[BotMessage]] = {"hello": Hello, "action": Reply}
ARENA_TYPES: dict[str, type[ArenaMessage]] = {
    "welcome": Welcome,
    "reject": Reject,
    "request": Request,
    "hand_over": HandOver,
    "match_over": MatchOver,
    "shutdown": Shutdown,
}
