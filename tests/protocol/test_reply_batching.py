"""The SDK holds a reply back to leave with the next ones only while the bot's acts are fast.

``_Session.handle`` is driven directly with a recording link and a fake clock that each act
advances by the time the test gives it, so "fast" and "slow" are exact.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

from arena.engine import Match, Rules
from protocol import make_hand_over, make_request, make_welcome, parse_bot_message
from protocol.client import _HOLD_S, Bot, Settings, _Session

pytestmark = pytest.mark.unit


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.act_s = 10e-6  # how long the next acts take

    def __call__(self) -> float:
        return self.now


CLOCK = _Clock()


class _Timed(Bot):
    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str:
        CLOCK.now += CLOCK.act_s
        return legal_actions[0]


class _Link:
    """Records what the SDK holds and when it flushes: ``writes`` are the seqs sent together."""

    def __init__(self) -> None:
        self.held: list[int] = []
        self.writes: list[list[int]] = []

    def hold(self, data: bytes) -> None:
        self.held.append(parse_bot_message(data).seq)  # type: ignore[union-attr]

    @property
    def holding(self) -> bool:
        return bool(self.held)

    def flush(self) -> None:
        if self.held:
            self.writes.append(self.held)
            self.held = []


def _session() -> tuple[_Session, _Link, bytes]:
    session = _Session(_Timed, Settings("ipc:///x", "t", 16, 1.0), "timed", "1", io.StringIO())
    session.clock = CLOCK
    link = _Link()
    session.handle(link, make_welcome(16))
    match = Match(Rules(), seed=1)
    seat = match.hand.to_move
    assert seat is not None
    view = match.view(seat)
    return session, link, make_request(1, "g", seat, view, view["legal_actions"], 1000, 10_000)


def _ask(session: _Session, link: _Link, request: bytes, seqs: range) -> None:
    for seq in seqs:  # the same position under new seqs: the bot object only answers it
        session.handle(link, request.replace(b'"seq":1,', f'"seq":{seq},'.encode(), 1))


def test_fast_replies_leave_together_each_waiting_at_most_the_hold_limit() -> None:
    session, link, request = _session()
    CLOCK.act_s = 10e-6
    _ask(session, link, request, range(1, 3001))
    link.flush()
    sent = [seq for write in link.writes for seq in write]
    assert sent == list(range(1, 3001))  # every reply, once, in order
    assert len(link.writes[0]) == 1  # nothing is held before the acts have shown they are fast
    together = max(len(write) for write in link.writes)
    assert together > 10  # once they have, replies share a write
    assert together <= _HOLD_S / CLOCK.act_s + 1  # none waits longer than the limit for the others


def test_after_a_slow_act_every_reply_leaves_at_once_for_a_while() -> None:
    session, link, request = _session()
    CLOCK.act_s = 10e-6
    _ask(session, link, request, range(1, 2001))
    assert link.holding  # fast: held back
    CLOCK.act_s = 0.5  # unforeseeable: the replies held then wait for it (under a millisecond's worth)
    _ask(session, link, request, range(2001, 2002))
    CLOCK.act_s = 10e-6
    _ask(session, link, request, range(2002, 2202))
    link.flush()
    first_after = next(i for i, write in enumerate(link.writes) if write[-1] >= 2001)
    assert link.writes[first_after][-1] == 2001  # they left with its reply, before the next act
    after = link.writes[first_after + 1:]
    assert [write[0] for write in after[:50]] == list(range(2002, 2052))  # 50 fast acts later, one reply per write
    assert max(len(write) for write in after) > 10  # and then held together again


class _Hooked(_Timed):
    def on_hand_over(self, result: dict[str, Any], view: dict[str, Any]) -> None:
        CLOCK.now += 0.5


@pytest.mark.parametrize("bot, flushed", [(_Timed, False), (_Hooked, True)], ids=["no hook", "hook"])
def test_replies_held_back_leave_before_a_hook_runs(bot: type[Bot], flushed: bool) -> None:
    session, link, request = _session()
    session.factory = bot
    CLOCK.act_s = 10e-6
    _ask(session, link, request, range(1, 1001))
    assert link.holding
    match = Match(Rules(), seed=1)
    while match.hand.result is None:
        match.apply(match.legal_actions()[0])
    session.handle(link, make_hand_over("g", 0, match.hand.view(0) | {"match": match.view(0)["match"]},
                                        match.score, match.carry))
    assert link.holding is not flushed  # a hook the bot does not override runs no bot code: nothing to wait for
    assert flushed is (bool(link.writes) and link.writes[-1][-1] == 1000)
