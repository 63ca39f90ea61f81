"""The wire protocol between the arena and bots: message types, codec and version.

``PROTOCOL.md`` beside this file is the language-neutral spec and ``schema.json`` the JSON
Schema of every message. ``protocol.client`` is the Python bot SDK, on ``protocol.zmtp``
(ZeroMQ's wire protocol in the standard library, without libzmq).
"""

from .codec import (
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
from .errors import ERROR_CODES, REJECT_REASONS, ProtocolError
from .messages import (
    ACTIONS,
    FAULT_KINDS,
    MAX_MESSAGE_BYTES,
    PROTOCOL_MAJOR,
    PROTOCOL_VERSION,
    VIEW_KEYS,
    ArenaMessage,
    BotMessage,
    HandOver,
    Hello,
    MatchOver,
    Message,
    Reject,
    Reply,
    Request,
    Shutdown,
    Welcome,
)

__all__ = [
    "ACTIONS", "ERROR_CODES", "FAULT_KINDS", "MAX_MESSAGE_BYTES", "PROTOCOL_MAJOR",
    "PROTOCOL_VERSION", "REJECT_REASONS", "VIEW_KEYS",
    "ArenaMessage", "BotMessage", "HandOver", "Hello", "MatchOver", "Message", "ProtocolError",
    "Reject", "Reply", "Request", "Shutdown", "Welcome",
    "encode", "make_action", "make_hand_over", "make_hello", "make_match_over", "make_reject",
    "make_request", "make_shutdown", "make_welcome", "parse_arena_message", "parse_bot_message",
    "parse_hello", "parse_reply",
]
