"""bots/random: its policy in-process, its manifest, and that it runs without the engine."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from collections import Counter
from types import ModuleType
from typing import Any

import pytest

from arena.engine import Match, Rules

from .conftest import RANDOM_BOT, REPO

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("random_bot_under_test", RANDOM_BOT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def view_with(seat: int, totals: list[int], legal: list[str]) -> dict[str, Any]:
    match = Match(Rules(), seed=1)
    view = match.view(match.hand.to_move)
    view.update(seat=seat, to_move=seat, totals=totals, legal_actions=legal)
    return view


def test_manifest() -> None:
    manifest = tomllib.loads((RANDOM_BOT.parent / "bot.toml").read_text())
    assert manifest["name"] == "random" and manifest["protocol"] == "1"
    assert manifest["command"] == ["{python}", "bot.py"]
    assert (RANDOM_BOT.parent / manifest["command"][1]).is_file()
    assert manifest["max_games"] >= 2


def test_declares_exactly_at_66_or_more(module: ModuleType) -> None:
    legal = ["meld H", "declare", "play AH", "play 9C"]
    for seat in (0, 1):
        bot = module.RandomBot("g", seat)
        at_66 = [0, 0]
        at_66[seat] = 66
        assert bot.act(view_with(seat, at_66, legal), legal) == "declare"
        assert bot.act(view_with(seat, [70, 70], ["declare", "pass"]), ["declare", "pass"]) == "declare"
        below = [66, 66]
        below[seat] = 65  # the opponent's total does not count
        picks = Counter(bot.act(view_with(seat, below, legal), legal) for _ in range(600))
        assert "declare" not in picks
        assert set(picks) == {"meld H", "play AH", "play 9C"}
        assert min(picks.values()) > 150  # roughly uniform: 200 expected each
        assert bot.act(view_with(seat, below, ["declare", "pass"]), ["declare", "pass"]) == "pass"


def test_each_game_has_its_own_seeded_stream(module: ModuleType) -> None:
    legal = [f"play {c}" for c in ("AC", "TC", "KC", "QC", "JC", "9C")]
    view = view_with(0, [0, 0], legal)

    def moves(game_id: str, seat: int = 0) -> list[str]:
        bot = module.RandomBot(game_id, seat)
        return [bot.act(view, legal) for _ in range(30)]

    assert moves("g1") == moves("g1")
    assert moves("g1") != moves("g2")
    assert moves("g1", 0) != moves("g1", 1)


def test_runs_without_the_engine() -> None:
    """Loading the bot imports the SDK but never arena.* (bots only get the view)."""
    code = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('bot', 'bot.py')\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "print(sorted(m for m in sys.modules if m == 'arena' or m.startswith(('arena.', 'jsonschema'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=RANDOM_BOT.parent, capture_output=True, text=True,
        timeout=60, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
