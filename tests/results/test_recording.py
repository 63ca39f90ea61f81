"""A pair and the rating snapshots it unlocks are stored as one unit; a resumed recording rates
as an uninterrupted one (unit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.engine.deals import Deals
from arena.engine.records import Pair, PairOutcome
from results.errors import StoreError
from results.recording import Recording
from tests.results.test_store import _outcome, _unwritable
from tests.tournament.stores import BOTS, SETTINGS

pytestmark = pytest.mark.unit

PAIRS = [Pair(i, 0, 1, i) for i in range(3)]


def _pair(index: int, winner: int = 0) -> PairOutcome:
    """Pair ``index`` with entrant ``winner`` winning both halves (seats swap in the second)."""
    return PairOutcome(index, (_outcome(f"p{index:05d}h0", winner), _outcome(f"p{index:05d}h1", 1 - winner)))


def _created(path: Path) -> Recording:
    recording = Recording(path)
    recording.create("t", 1, SETTINGS, BOTS, PAIRS, Deals.public(1), {"sdk.py": "d1"})
    return recording


def test_a_failed_commit_leaves_the_ratings_where_they_were(tmp_path: Path) -> None:
    with _created(tmp_path / "a.sqlite") as recording:
        recording.record(_pair(0), PAIRS[0], 1, {})
        rated = dict(recording.rater.ratings), recording.rater.frontier
        with pytest.raises(StoreError, match="already stored"):
            recording.record(_pair(0), PAIRS[0], 1, {})  # the commit fails: the rater must not move
        first, second = _pair(1).outcomes
        with pytest.raises(KeyError):
            recording.record(PairOutcome(1, (first, _unwritable(second))), PAIRS[1], 1,
                             {1: "withdrawn with a pair that failed"})
        assert (dict(recording.rater.ratings), recording.rater.frontier) == rated
        store = recording.store
        assert [s.after_pair for s in store.snapshots(recording.tid)] == [0, 0]
        assert [e.withdrawn for e in store.entrants(recording.tid)] == [None, None]
        recording.record(_pair(1), PAIRS[1], 1, {})
        assert recording.rater.frontier == 2 and [s.after_pair for s in store.snapshots(recording.tid)] == [0, 0, 1, 1]


def test_reopened_it_holds_what_was_stored_and_rates_on_where_it_stopped(tmp_path: Path) -> None:
    with _created(tmp_path / "a.sqlite") as recording:
        recording.record(_pair(1, winner=1), PAIRS[1], 1, {1: "changed during the run"})
        recording.record(_pair(0), PAIRS[0], 1, {})
        recording.record(_pair(2), PAIRS[2], 1, {})
        uninterrupted = dict(recording.rater.ratings)
    with _created(tmp_path / "b.sqlite") as recording:
        recording.record(_pair(1, winner=1), PAIRS[1], 1, {1: "changed during the run"})  # pair 0 not yet: no snapshot
    with Recording(tmp_path / "b.sqlite") as resumed:
        stored = resumed.stored()
        assert stored is not None and stored.done == {1} and not stored.finished
        assert [(e.bot.label, e.withdrawn) for e in stored.entrants] == [("x", None), ("y", "changed during the run")]
        assert stored.runtime == {"sdk.py": "d1"} and stored.deals == Deals.public(1)
        resumed.record(_pair(0), PAIRS[0], 1, {})
        resumed.record(_pair(2), PAIRS[2], 1, {})
        assert dict(resumed.rater.ratings) == uninterrupted
        resumed.finish()
        assert resumed.stored().finished  # type: ignore[union-attr]


def test_decided_asks_the_stopping_rule_and_never_decides_without_one(tmp_path: Path) -> None:
    class AfterTwoPairs:
        def decided(self, store, tid) -> bool:  # type: ignore[no-untyped-def]
            return len(store.finished_pairs(tid)) >= 2

    with _created(tmp_path / "a.sqlite") as recording:
        recording.record(_pair(0), PAIRS[0], 1, {})
        recording.record(_pair(1), PAIRS[1], 1, {})
        assert not recording.decided()
    with Recording(tmp_path / "a.sqlite", stop_rule=AfterTwoPairs()) as ruled:
        ruled.stored()
        assert ruled.decided() and ruled.leader() == 0
