"""The ladder bots play: a small in-process duplicate sample where the margin is huge, and a
real match of every ladder bot against bots/random over the real protocol."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import types
from pathlib import Path

import pytest

from arena.botproc import load_manifest, procfs
from arena.engine import Rules
from arena.matchplay import MatchSettings, SessionPool, play_match
from botkit.bots import GreedyBot
from botkit.duel import duel, mean_ci

from .conftest import LADDER, SMALL_BUDGET

REPO = Path(__file__).resolve().parents[2]


def random_bot_class() -> type:
    spec = importlib.util.spec_from_file_location("bots_random_under_test", REPO / "bots" / "random" / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RandomBot  # type: ignore[no-any-return]


@pytest.mark.unit
def test_greedy_beats_random_in_a_small_duplicate_sample() -> None:
    rules = Rules()
    tally = duel(lambda g, s: GreedyBot(g, s, rules=rules), random_bot_class(), ("greedy", "random"),
                 deals=40, seed="ci", rules=rules)
    win, _ = mean_ci(tally.deal_wins)
    points, _ = mean_ci(tally.deal_points)
    assert len(tally.deal_wins) >= 40
    assert win > 0.65 and points > 0.5
    assert set(tally.think) == {"greedy", "random"}


@pytest.mark.integration
def test_every_ladder_bot_plays_a_real_match_without_a_fault(tmp_path: Path) -> None:
    before = set(procfs.descendants(os.getpid()))
    random_bot = load_manifest(REPO / "bots" / "random")
    with SessionPool(tmp_path, MatchSettings()) as pool:
        for i, name in enumerate(LADDER):
            manifest = load_manifest(REPO / "bots" / name)
            assert manifest.name == name and manifest.max_games >= 1
            if name in SMALL_BUDGET:  # keep CI fast: a small budget through the manifest's env
                env = {"BOT_BUDGET": str(SMALL_BUDGET[name])}
                manifest = dataclasses.replace(manifest, env=types.MappingProxyType(env))
            seats = (manifest, random_bot) if i % 2 == 0 else (random_bot, manifest)
            outcome = play_match(pool, seats, f"ladder-{name}", seed=100 + i)
            assert outcome.faults == (), (name, outcome.faults)
            assert outcome.winner is not None and not outcome.forfeit and outcome.results
    assert not set(procfs.descendants(os.getpid())) - before


@pytest.mark.unit
@pytest.mark.parametrize("profile", ["pagat", "santase"])
def test_every_ladder_bot_plays_other_rule_profiles(profile: str) -> None:
    """The bots read the rules they are given (the SDK passes the welcome's) and play legally."""
    rules = Rules.profile(profile)
    for name, cls in LADDER.items():
        budget = SMALL_BUDGET.get(name)
        tally = duel(lambda g, s: cls(g, s, rules=rules, budget=budget), random_bot_class(), (name, "random"),
                     deals=2, seed=f"profile:{profile}", rules=rules)
        assert tally.think[name] and len(tally.deal_wins) >= 2
