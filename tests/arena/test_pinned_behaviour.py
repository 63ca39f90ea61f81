"""Pinned hashes of what bots see and what the search bots decide, so that engine speed work
(the rules core, the checked ``Hand`` over it, the views) cannot change either unnoticed.

The views are the wire contract (protocol/PROTOCOL.md): every decision and hand-over view the
referee sends, the match's own views and the compliance suite's probe views, over 60 random
matches in three rule profiles. The search bots' decisions are hashed over short duels with
fixed budgets (iterations, not time, so they are deterministic). A change on purpose updates
the hash here in the same commit, and says why.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

import pytest

from arena.clock import TimeControl
from arena.engine import Rules
from arena.referee import Referee
from arena.validation.positions import DECISION_TYPES, EDGE_STATES
from arena.validation.probe import ProbeReferee
from botkit import duel
from botkit.bots import ExpertABBot, ExpertBot, IsmctsBot, PimcBot

pytestmark = pytest.mark.unit

VIEWS_SHA256 = "fbe687315e5d5a45ab906c834fccb24d79d41bce2c4758f7ef7e515d75c8e0e3"
SEARCH_SHA256 = "9e8a7b46bc63998f348c12df83c1de4829adeb4a49b8045ad9ddea3fa67b2adc"
CLOCK = TimeControl(time_limit_ms=1000, bank_ms=1000)


class Digest:
    def __init__(self) -> None:
        self.sha = hashlib.sha256()

    def feed(self, obj: Any) -> None:
        self.sha.update(json.dumps(obj).encode())
        self.sha.update(b"\n")


def answer(legal: list[str], view: dict[str, Any], rng: random.Random) -> str:
    """Random legal play that declares most of the time it can (so declarations are covered)."""
    if "declare" in legal and view["totals"][view["seat"]] >= 66 and rng.random() < 0.8:
        return "declare"
    return rng.choice(legal)


def test_every_view_a_bot_is_sent_is_unchanged() -> None:
    digest = Digest()
    for i in range(60):
        rules = [Rules(), Rules.profile("pagat"), Rules.profile("santase")][i % 3]
        referee = Referee(f"m{i}", i, rules, ("a", "b"), CLOCK)
        rng = random.Random(i)
        while (decision := referee.decision()) is not None:
            digest.feed(decision.view)
            digest.feed(decision.legal_actions)
            digest.feed(referee.match.view(1 - decision.seat))
            for note in referee.answer(answer(decision.legal_actions, decision.view, rng), 0.001):
                digest.feed([note.seat, note.kind, note.view, list(note.score) if note.score else None, note.carry])
        digest.feed(referee.outcome().to_dict())
    for position in DECISION_TYPES + EDGE_STATES:
        for playout in (True, False):
            probe = ProbeReferee(position.name, position, bot_name="x", time_control=CLOCK, playout=playout)
            probe.start()
            rng = random.Random(position.name)
            while (decision := probe.decision()) is not None:
                digest.feed(decision.view)
                for note in probe.answer(answer(decision.legal_actions, decision.view, rng), 0.001):
                    digest.feed([note.seat, note.kind, note.view, note.score, note.carry, note.winner])
    assert digest.sha.hexdigest() == VIEWS_SHA256, "the views changed: they are the wire contract"


def test_search_bots_decide_as_before() -> None:
    sha = hashlib.sha256()

    def recorded(cls: Any, budget: int | None) -> duel.Factory:
        def make(game_id: str, seat: int) -> Any:
            bot = cls(game_id, seat, rules=Rules(), budget=budget)
            act = bot.act

            def logged(view: dict[str, Any], legal: list[str]) -> str:
                action: str = act(view, legal)
                sha.update(f"{cls.name}:{action};".encode())
                return action
            bot.act = logged
            return bot
        return make

    for (a, budget_a), (b, budget_b) in [((PimcBot, 4), (ExpertBot, None)), ((IsmctsBot, 30), (ExpertABBot, 6))]:
        tally = duel.duel(recorded(a, budget_a), recorded(b, budget_b), (a.name, b.name), deals=2, seed="h")
        sha.update(repr((tally.deal_wins, tally.match_wins)).encode())
    assert sha.hexdigest() == SEARCH_SHA256, "a search bot's decisions changed"
