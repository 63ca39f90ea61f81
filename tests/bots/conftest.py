"""Fixtures for the ladder-bot tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arena.engine import Rules
from botkit.bots import ExpertABBot, ExpertBot, GreedyBot, IsmctsBot, LadderBot, PimcBot

LADDER: dict[str, type[LadderBot]] = {
    "greedy": GreedyBot, "expert": ExpertBot, "expert_ab": ExpertABBot, "pimc": PimcBot, "ismcts": IsmctsBot,
}
SEARCH = ("expert_ab", "pimc", "ismcts")
SMALL_BUDGET = {"expert_ab": 12, "pimc": 6, "ismcts": 60}

MakeBot = Callable[[str, int], LadderBot]


@pytest.fixture
def make_bot() -> Callable[[str, int], LadderBot]:
    """``make_bot(name, seat)``: an in-process ladder bot with a small test budget."""

    def make(name: str, seat: int) -> LadderBot:
        return LADDER[name](f"test-{name}", seat, rules=Rules(), budget=SMALL_BUDGET.get(name), seed="t")

    return make
