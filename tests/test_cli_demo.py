"""The README's first command: ``arena play-demo``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arena.cli import main
from arena.engine import Match, Rules

pytestmark = pytest.mark.e2e


def test_play_demo_prints_every_hand_and_the_winner(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play-demo", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Match seed 7")
    hands = [line for line in out.splitlines() if line.startswith("Hand ")]
    assert hands and hands[0].startswith("Hand 1: dealer P")
    assert out.count("  score ") == len(hands)
    last = out.strip().splitlines()[-1]
    assert last.startswith("P") and "wins the match" in last
    winner, score = int(last[1]), last.rsplit(" ", 1)[1]
    points = [int(x) for x in score.split("-")]
    assert points[winner] >= Rules().match_target > points[1 - winner]


def test_play_demo_is_deterministic_and_seed_dependent(capsys: pytest.CaptureFixture[str]) -> None:
    main(["play-demo", "--seed", "3"])
    first = capsys.readouterr().out
    main(["play-demo", "--seed", "3"])
    assert capsys.readouterr().out == first
    main(["play-demo", "--seed", "4"])
    assert capsys.readouterr().out != first


def test_play_demo_santase_profile_plays_to_eleven(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play-demo", "--seed", "2", "--profile", "santase"]) == 0
    assert "first to 11 game points" in capsys.readouterr().out


def test_console_script_runs_and_bad_flags_fail() -> None:
    ok = subprocess.run([sys.executable, "-m", "arena.cli", "play-demo", "--seed", "1"],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "wins the match" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "arena.cli", "play-demo", "--profile", "nope"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_demo_score_matches_an_engine_match_with_the_same_seed(capsys: pytest.CaptureFixture[str]) -> None:
    main(["play-demo", "--seed", "5"])
    out = capsys.readouterr().out
    assert Match(Rules(), seed=5).hand.dealer == int(out.split("Hand 1: dealer P")[1][0])
