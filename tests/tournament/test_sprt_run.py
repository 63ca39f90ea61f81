"""``arena sprt`` end to end with real bot processes: decisions, resume after kill -9, bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from .test_e2e import arena, kill_9_once_stored

pytestmark = pytest.mark.e2e


def sprt(out: Path, new: str, base: str, *flags: str) -> list[str]:
    return ["sprt", new, base, "--out", str(out), "--allow-unvalidated", "--quiet", "--json", "--concurrency", "2",
            *flags]


def final_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def test_expert_against_random_accepts_h1_and_the_run_is_a_stored_gauntlet(tmp_path: Path) -> None:
    out = tmp_path / "expert"
    result = arena(*sprt(out, "bots/expert", "bots/random", "--elo1", "20"))
    assert result.returncode == 0, result.stderr
    verdict = final_json(result.stdout)
    assert verdict["result"] == "H1" and verdict["pairs"] <= 60 and verdict["llr"] >= verdict["upper"]
    assert verdict["lower"] == pytest.approx(math.log(0.05 / 0.95)) and verdict["los"] > 0.99
    assert "sprt: H1 accepted" in result.stdout and "LLR" in result.stderr  # the state as it goes
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["pairs_done"] >= verdict["pairs"] and board["pairs_total"] == 1000
    assert arena("verify", str(out)).returncode == 0
    assert arena("show", str(out), "p00000h1").returncode == 0
    assert arena("reveal", str(out)).returncode == 0  # decided: the tournament is finished


def test_a_copy_of_itself_does_not_accept_h1(tmp_path: Path) -> None:
    result = arena(*sprt(tmp_path / "self", "bots/random", "bots/random", "--max-pairs", "40", "--public-deals",
                         "--seed", "6"))
    assert result.returncode == 0, result.stderr
    verdict = final_json(result.stdout)
    assert verdict["result"] in ("H0", "max-pairs") and verdict["pairs"] <= 40


def test_kill_9_then_resume_decides_as_an_uninterrupted_run(tmp_path: Path) -> None:
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    flags = ("--elo1", "8", "--public-deals", "--seed", "5")
    kill_9_once_stored(list(sprt(killed, "bots/greedy", "bots/random", *flags)), killed, pairs=6)
    resumed = arena("resume", str(killed), "--quiet", "--json")
    assert resumed.returncode == 0, resumed.stderr
    uninterrupted = arena(*sprt(clean, "bots/greedy", "bots/random", *flags))
    assert uninterrupted.returncode == 0, uninterrupted.stderr
    assert final_json(resumed.stdout) == final_json(uninterrupted.stdout)
    assert final_json(uninterrupted.stdout)["result"] == "H1"


@pytest.mark.parametrize(("flags", "message"), [
    (("--max-pairs", "0"), "--max-pairs must be at least 1"),
    (("--elo0", "5", "--elo1", "0"), "elo0 must be below elo1"),
    (("--alpha", "1.5"), "alpha and beta must be between 0 and 1"),
])
def test_bad_sprt_settings_are_one_line_errors(tmp_path: Path, flags: tuple[str, ...], message: str) -> None:
    result = arena(*sprt(tmp_path / "bad", "bots/random", "bots/random", *flags))
    assert result.returncode == 2 and message in result.stderr and not (tmp_path / "bad").exists()
