"""Slice 4: the views everyone may see, and what only a bot's owner (or the organiser) may."""

from __future__ import annotations

import io
import tarfile

import pytest

from .conftest import Server
from .helpers import board, wait_for

pytestmark = pytest.mark.integration


def test_leaderboard_bot_pages_matches_and_replays(competition: Server) -> None:
    with competition.client() as anonymous:
        lb = board(anonymous)
        assert lb["pairs"] >= 3 and {"alicebot", "bobbot"} <= {b["bot"] for b in lb["bots"]}
        ranks = [b["rank"] for b in lb["bots"]]
        assert ranks == list(range(1, len(ranks) + 1))
        keys = [b["mu"] - 3 * b["sigma"] for b in lb["bots"]]
        assert keys == sorted(keys, reverse=True)
        for b in lb["bots"]:
            if b["matches"]:  # the Bradley-Terry object of DESIGN's leaderboard contract
                assert set(b["bt"]) == {"elo", "elo_ci95", "rank_ci95", "p_top1"}
                assert b["bt"]["elo_ci95"][0] <= b["bt"]["elo"] <= b["bt"]["elo_ci95"][1]
                assert 0.0 <= b["bt"]["p_top1"] <= 1.0
        page = anonymous.get("/")
        assert page.status_code == 200 and 'data-bot="bobbot"' in page.text

        bot = anonymous.get("/api/bots/bobbot").json()
        assert bot["owner"] == "bob" and bot["current"]["bot"] == "bobbot" and bot["versions"]
        assert bot["matches"] and all("bobbot@" in " ".join(m["names"]) for m in bot["matches"])
        assert anonymous.get("/bots/bobbot").status_code == 200
        assert anonymous.get("/api/bots/nobody").status_code == 404

        matches = anonymous.get("/api/matches").json()["matches"]
        assert matches
        match = anonymous.get(matches[0]["url"].replace("/matches/", "/api/matches/")).json()
        assert match["replay"] and match["replay"][0]["steps"]
        assert sum(h["result"]["game_points"] for h in match["replay"] if h["result"] and h["result"]["winner"]
                   is not None) >= 1
        html = anonymous.get(matches[0]["url"])  # the public replay link
        assert html.status_code == 200 and 'id="replay-data"' in html.text
        assert anonymous.get("/static/report/report.js").status_code == 200
        assert anonymous.get("/api/matches/p99999h0").status_code == 404


def test_owners_read_their_logs_and_code(competition: Server) -> None:
    with competition.client("bob") as bob:
        wait_for("bob's ladder logs", lambda: any(log["source"] == "ladder"
                                                  for log in bob.get("/api/bots/bobbot/logs").json()["logs"]))
        logs = bob.get("/api/bots/bobbot/logs").json()["logs"]
        assert {log["source"] for log in logs} >= {"ladder"} and all(log["name"].startswith("bobbot-") for log in logs)
        page = bob.get("/bots/bobbot/logs")
        assert page.status_code == 200 and "stderr logs" in page.text
        code = bob.get("/api/bots/bobbot/code")
        assert code.status_code == 200
        with tarfile.open(fileobj=io.BytesIO(code.content), mode="r:gz") as tar:
            assert "bot.toml" in tar.getnames()
