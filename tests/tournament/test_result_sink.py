"""The runner's side of storing a pair: withdrawals go with the refused pair, the report counts (unit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.engine.deals import Deals
from arena.engine.records import ChangedBot, Pair
from arena.matchplay import MatchSettings
from arena.runner import PairTask, ResultSink, RunReport
from results.recording import Recording
from tests.tournament.stores import BOTS, SETTINGS

pytestmark = pytest.mark.unit

PAIRS = {i: Pair(i, 0, 1, i) for i in range(3)}


def test_a_withdrawal_is_stored_with_its_refused_pair(tmp_path: Path) -> None:
    with Recording(tmp_path / "a.sqlite") as results:
        stored = results.create("t", 1, SETTINGS, BOTS, list(PAIRS.values()), Deals.public(1), {})
        sink = ResultSink(results, stored, RunReport(tmp_path, 3, 0), PAIRS, ("x", "y"))
        task = PairTask(0, 0, ("/x", "/y"), ("x", "y"), MatchSettings(), str(tmp_path), ("f", "g"))
        sink.refuse(task, (ChangedBot(1, "0123456789abcdef"),))
        store, tid = results.store, results.tid
        assert [e.withdrawn is not None for e in store.entrants(tid)] == [False, True]
        assert sink.refused_entrants(PairTask(1, 1, ("/x", "/y"), ("x", "y"), MatchSettings(), "")) == [1]
        assert [m.void for m in store.matches(tid)] == [True, True]
        assert all("refused: 'y' changed during the run" in f.detail for f in store.faults(tid))
        assert sink.report.withdrawn["y"].startswith("changed during the run (fingerprint g at the start")
        assert sink.report.pairs_played == 1 and sink.report.faults == 2
    with Recording(tmp_path / "a.sqlite") as reopened:  # a resumed run refuses the withdrawn bot's pairs too
        again = ResultSink(reopened, reopened.stored(), RunReport(tmp_path, 3, 1), PAIRS, ("x", "y"))  # type: ignore[arg-type]
        assert again.refused_entrants(PairTask(2, 2, ("/x", "/y"), ("x", "y"), MatchSettings(), "")) == [1]
        assert list(again.report.withdrawn) == ["y"]
