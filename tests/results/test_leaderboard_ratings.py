"""``arena leaderboard``'s two ratings on stored engine matches: defaults, exports, bad flags (unit)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.cli import main
from arena.engine.deals import Deals
from tests.tournament.stores import make_store

pytestmark = pytest.mark.unit


def folder(tmp_path: Path, name: str, *, finished: bool) -> Path:
    out = tmp_path / name
    out.mkdir()
    make_store(out / "arena.sqlite", Deals.public(3), finished=finished)
    return out


def test_bt_ranks_a_finished_tournament_and_trueskill_a_running_one(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    for name, finished, rating in (("done", True, "bt"), ("running", False, "trueskill")):
        out = folder(tmp_path, name, finished=finished)
        assert main(["leaderboard", str(out), "--bootstrap", "50"]) == 0
        table = capsys.readouterr().out
        assert ("ranked by Bradley-Terry Elo" in table) is (rating == "bt")
        assert ("ranked by TrueSkill" in table) is (rating == "trueskill")
        board = json.loads((out / "leaderboard.json").read_text())
        assert board["ranked_by"] == rating
        assert board["bt_model"] == {"unit": "match", "prior": "1 win + 1 loss vs Elo 0", "bootstrap": 50, "seed": 1}
        for standing in board["standings"]:
            assert set(standing["bt"]) == {"elo", "elo_ci95", "rank_ci95", "p_top1"} and "mu" in standing
        assert sum(s["bt"]["elo"] for s in board["standings"]) == pytest.approx(0.0, abs=1e-9)
        rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
        assert {"bt_elo", "bt_elo_lo", "bt_elo_hi", "bt_rank_lo", "bt_rank_hi", "bt_p_top1", "mu"} <= set(rows[0])
    assert main(["leaderboard", str(tmp_path / "done"), "--rating", "trueskill", "--bootstrap", "50"]) == 0
    assert "ranked by TrueSkill" in capsys.readouterr().out


@pytest.mark.parametrize("flags", [["--top-k", "0"], ["--bootstrap", "0"]])
def test_bad_rating_flags_are_one_line_errors(tmp_path: Path, flags: list[str],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = folder(tmp_path, "t", finished=True)
    assert main(["leaderboard", str(out), *flags]) == 2
    assert "must be at least 1" in capsys.readouterr().err and not (out / "leaderboard.json").exists()


def test_each_entrants_hands_and_game_points_are_those_of_its_stored_hands(tmp_path: Path) -> None:
    from results.leaderboard import build_leaderboard
    from results.store import Store

    out = folder(tmp_path, "done", finished=True)
    with Store(out / "arena.sqlite", readonly=True) as store:
        tid = store.tournament().id
        seats = {m.id: m.seats for m in store.matches(tid)}
        hands, points = [0, 0], [0, 0]
        for hand in store.all_hands(tid):  # hand by hand, as the leaderboard once counted them
            for entrant in seats[hand.match_row]:
                hands[entrant] += 1
            if hand.winner_seat is not None:
                points[seats[hand.match_row][hand.winner_seat]] += hand.game_points
        board = build_leaderboard(store, bootstrap=10)
    assert sorted((s.entrant, s.hands, s.game_points) for s in board.standings) == [
        (0, hands[0], points[0]), (1, hands[1], points[1])]
    assert min(points) > 0 and hands[0] == hands[1] > 0


@given(st.lists(st.floats(min_value=0.0, max_value=1e7), max_size=300))
def test_decision_time_figures_are_the_elements_at_their_rank_in_sorted_order(values: list[float]) -> None:
    from results.leaderboard import _order_stats

    ordered = sorted(values)
    n = len(ordered)
    expected = (ordered[min(n - 1, int(0.5 * n))], ordered[min(n - 1, int(0.99 * n))], ordered[-1]) if n else (None,) * 3
    found = _order_stats(values)
    assert found == expected and all(type(x) is float for x in found if x is not None)
