"""protocol.client hands the welcome's rules to every bot object before ``act``."""

from __future__ import annotations

import io
from typing import Any

import pytest

from arena.engine import Match, Rules
from protocol import make_request, make_welcome
from protocol.client import Bot, Settings, _Session

pytestmark = pytest.mark.unit


class _Sock:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    holding = False

    def hold(self, data: bytes) -> None:
        self.sent.append(data)

    def flush(self) -> None:
        pass


class _Recorder(Bot):
    seen: list[dict[str, Any]] = []

    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str:
        _Recorder.seen.append(dict(self.rules))
        return legal_actions[0]


def test_welcome_rules_reach_the_bot() -> None:
    assert Bot("g", 0).rules == {}  # before any welcome: the default profile
    rules = Rules.profile("santase")
    session = _Session(_Recorder, Settings("ipc:///x", "t", 1, 1.0), "rec", "1", io.StringIO())
    sock = _Sock()
    session.handle(sock, make_welcome(1, rules=rules.to_dict()))  # type: ignore[arg-type]
    match = Match(rules, seed=3)
    seat = match.hand.to_move
    assert seat is not None
    view = match.view(seat)
    session.handle(sock, make_request(1, "m1", seat, view, view["legal_actions"], 1000, 10_000))  # type: ignore[arg-type]
    assert _Recorder.seen == [rules.to_dict()] and len(sock.sent) == 1
