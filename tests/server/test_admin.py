"""Slice 5: the organiser disables a bot (its results leave the standings, the reason shown),
pauses and resumes the ladder, freezes submissions, and runs the settle phase."""

from __future__ import annotations

import pytest

from .archives import bot_targz
from .conftest import Server
from .helpers import board, ladder_rows, upload, wait_for

pytestmark = pytest.mark.integration


def unfinished(server: Server) -> int:
    return int(ladder_rows(server.folder, "SELECT count(*) FROM pairs WHERE finished_at IS NULL")[0][0])


def all_pairs(server: Server) -> int:
    return int(ladder_rows(server.folder, "SELECT count(*) FROM pairs")[0][0])


def pairs_of(server: Server, bot: str) -> int:
    return int(ladder_rows(server.folder, "SELECT count(*) FROM pairs p JOIN entrants e ON e.entrant IN "
                           "(p.entrant_a, p.entrant_b) JOIN bots b ON b.id = e.bot_id WHERE b.name = ?", bot)[0][0])


def test_disable_pause_freeze_and_settle(competition: Server) -> None:
    server = competition
    with server.client("organiser") as organiser, server.client() as anonymous, server.client("carol") as carol:
        # Disable: out of play, out of the standings, the reason shown; its games leave the others' ratings.
        assert organiser.post("/api/admin/bots/bobbot/disable", json={"reason": "cheating, says the test"}
                              ).status_code == 200
        wait_for("the pairs in flight to finish", lambda: unfinished(server) == 0, 60)
        bob_pairs = pairs_of(server, "bobbot")
        lb = board(anonymous)
        assert "bobbot" not in {b["bot"] for b in lb["bots"]}
        assert {"bot": "bobbot", "owner": "bob", "reason": "cheating, says the test"} in lb["disabled"]
        assert "cheating, says the test" in anonymous.get("/").text
        assert "out of play: cheating" in anonymous.get("/bots/bobbot").text
        alice = next(b for b in lb["bots"] if b["bot"] == "alicebot")
        label = f"alicebot@{alice['version']}"
        without_bob = ladder_rows(server.folder, "SELECT count(*) FROM matches m JOIN entrants a ON a.entrant IN "
                                  "(m.seat0, m.seat1) AND a.label = ? WHERE NOT EXISTS (SELECT 1 FROM entrants o "
                                  "JOIN bots b ON b.id = o.bot_id WHERE o.entrant IN (m.seat0, m.seat1) AND "
                                  "b.name = 'bobbot')", label)[0][0]
        assert alice["matches"] == without_bob  # alicebot's games against bobbot left its record
        assert pairs_of(server, "bobbot") == bob_pairs  # a disabled bot gets no new pairs
        assert organiser.post("/api/admin/bots/bobbot/enable", json={}).status_code == 200
        back = next(b for b in board(anonymous)["bots"] if b["bot"] == "alicebot")
        assert back["matches"] > 0

        # Pause: what is in flight finishes, then nothing new is scheduled until resume.
        assert organiser.post("/api/admin/pause", json={}).json() == {"paused": True}
        wait_for("the pairs in flight to finish", lambda: unfinished(server) == 0, 60)
        paused_at = all_pairs(server)

        # Freeze: uploads refused while frozen.
        assert organiser.post("/api/admin/freeze", json={}).json() == {"frozen": True}
        frozen = upload(carol, bot_targz("carolbot"))
        assert frozen.status_code == 403 and "frozen" in frozen.json()["error"]
        assert "frozen" in carol.get("/submit").text
        assert organiser.post("/api/admin/unfreeze", json={}).json() == {"frozen": False}
        assert all_pairs(server) == paused_at

        assert organiser.post("/api/admin/resume", json={}).json() == {"paused": False}
        wait_for("new pairs after resume", lambda: all_pairs(server) >= paused_at + 2)

        # Settle: submissions freeze, a double round-robin among the bots in play, official standings.
        bad = organiser.post("/api/admin/settle", json={"pairs": 0})
        assert bad.status_code == 400
        assert organiser.post("/api/admin/settle", json={"pairs": 1}).status_code == 200
        assert organiser.post("/api/admin/settle", json={"pairs": 1}).status_code == 409
        done = wait_for("the settle phase", lambda: (s := anonymous.get("/api/settle").json()["settle"])
                        and s["status"] == "done" and s, 120)
        in_play = {b["bot"] for b in board(anonymous)["bots"]}
        assert {s["bot"] for s in done["standings"]} == in_play
        elos = [s["bt"]["elo"] for s in done["standings"]]
        assert elos == sorted(elos, reverse=True)  # official standings: ranked by Bradley-Terry
        n = len(in_play)
        assert done["pairs_total"] == done["pairs_done"] == n * (n - 1)  # double round-robin, one pair each side
        assert board(anonymous)["frozen"] is True
        page = anonymous.get("/settle")
        assert "official standings" in page.text and 'data-status="done"' in page.text
        events = [e["what"] for e in organiser.get("/api/admin/state").json()["events"]]
        assert any("settle phase 1 done" in e for e in events) and any("disabled bobbot" in e for e in events)
        organiser.post("/api/admin/unfreeze", json={})  # open again for the tests that follow
