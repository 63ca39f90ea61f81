"""``arena serve`` on a folder whose tournament is running: results show up while it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import LiveRun
from .html import parse, table_rows

pytestmark = pytest.mark.e2e

LATENCY_S = 5.0


def test_serve_shows_a_waiting_page_then_each_finished_pair_within_seconds(live_run: LiveRun) -> None:
    assert live_run.url.startswith("http://127.0.0.1:")
    assert "No results yet" in live_run.waiting_page
    total = live_run.served[-1][1]["pairs_total"]
    assert total == 6 and live_run.served[-1][1]["pairs_done"] == 6
    seen = sorted({status["pairs_done"] for _, status in live_run.served if status["pairs_total"]})
    assert any(0 < n < total for n in seen), f"never saw the tournament in progress: {seen}"
    for n in range(1, total + 1):
        stored_at = next(t for t, count in live_run.db_seen if count >= n)
        shown_at = next(t for t, status in live_run.served if status["pairs_done"] >= n)
        assert shown_at - stored_at < LATENCY_S, f"pair {n} took {shown_at - stored_at:.1f} s to show"


def test_served_leaderboards_grow_with_the_tournament(live_run: LiveRun) -> None:
    for pairs_done, html in live_run.pages.items():
        doc = parse(html)
        assert doc.by_id("progress").attrs["data-pairs-done"] == str(pairs_done)
        if pairs_done:
            rows = table_rows(doc.by_id("leaderboard"))
            # two matches per pair, each counted for both entrants (no void matches in this field)
            assert sum(int(row[10]) for row in rows) == 4 * pairs_done  # the matches column
        assert doc.iter("body")[0].attrs.get("data-live") == "1"


def test_served_pages_are_the_static_reports(live_run: LiveRun, site_dir: Path) -> None:
    for name, html in live_run.final.items():
        served, static = parse(html), parse((site_dir / name).read_text(encoding="utf-8"))
        assert served.iter("main")[0].text == static.iter("main")[0].text, name
    assert live_run.not_found == 404
    assert live_run.serve_exit == 0
