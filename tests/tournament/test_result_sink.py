"""A pair and the rating snapshots it unlocks are stored as one unit (unit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.engine.records import ChangedBot, PairOutcome
from arena.runner import ResultSink, RunReport
from results.errors import StoreError
from results.ratings import RatingEnv, ScheduleRater
from results.store import Store
from tests.results.test_store import BOTS, _outcome, _unwritable

pytestmark = pytest.mark.unit

SEATS = {i: [(0, 1), (1, 0)] for i in range(3)}


def _result(index: int) -> PairOutcome:
    return PairOutcome(index, (_outcome(f"p{index:05d}h0", 0), _outcome(f"p{index:05d}h1", 0)))


def test_a_failed_commit_leaves_the_ratings_where_they_were(tmp_path: Path) -> None:
    with Store(tmp_path / "a.sqlite", create=True) as store:
        tid = store.create_tournament("t", 1, {}, BOTS, [(i, 0, 1, i) for i in range(3)])
        sink = ResultSink(store, tid, ScheduleRater(RatingEnv(), 2), RunReport(tmp_path, 3, 0), SEATS, ("x", "y"))
        sink.record(_result(0), 1)
        rated = dict(sink.rater.ratings), sink.rater.frontier
        with pytest.raises(StoreError, match="already stored"):
            sink.record(_result(0), 1)  # the commit fails: the rater must not move
        first, second = _result(1).outcomes
        broken = PairOutcome(1, (first, _unwritable(second)))
        with pytest.raises(KeyError):
            sink.record(broken, 1)
        assert (dict(sink.rater.ratings), sink.rater.frontier) == rated and sink.report.pairs_played == 1
        assert [s["after_pair"] for s in store.snapshots(tid)] == [0, 0]
        sink.record(_result(1), 1)
        assert sink.rater.frontier == 2 and [s["after_pair"] for s in store.snapshots(tid)] == [0, 0, 1, 1]


def test_a_withdrawal_is_stored_with_its_refused_pair(tmp_path: Path) -> None:
    from arena.matchplay import MatchSettings
    from arena.runner import PairTask

    with Store(tmp_path / "a.sqlite", create=True) as store:
        tid = store.create_tournament("t", 1, {}, BOTS, [(i, 0, 1, i) for i in range(3)])
        sink = ResultSink(store, tid, ScheduleRater(RatingEnv(), 2), RunReport(tmp_path, 3, 0), SEATS, ("x", "y"))
        task = PairTask(0, 0, ("/x", "/y"), ("x", "y"), MatchSettings(), str(tmp_path), ("f", "g"))
        sink.refuse(task, (ChangedBot(1, "0123456789abcdef"),))
        assert [e["withdrawn"] is not None for e in store.entrants(tid)] == [False, True]
        assert sink.refused_entrants(PairTask(1, 1, ("/x", "/y"), ("x", "y"), MatchSettings(), "")) == [1]
        assert [m["void"] for m in store.matches(tid)] == [1, 1]
        assert all("refused: 'y' changed during the run" in f["detail"] for f in store.faults(tid))
        assert sink.report.withdrawn["y"].startswith("changed during the run (fingerprint g at the start")
