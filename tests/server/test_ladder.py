"""Slice 3: the ladder on a real server: upload -> validation -> games -> leaderboard; a new
version replaces the old in play; a late entrant joins; kill -9 and restart lose nothing."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from arena.server.ladder import RatingPace

from .archives import bot_targz
from .conftest import Server
from .helpers import board, ladder_rows, line, upload, verdict, wait_for

pytestmark = pytest.mark.integration


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_accepted_bots_play_and_new_versions_and_late_entrants_join(competition: Server) -> None:
    server = competition
    with server.client("alice") as alice, server.client("bob") as bob, server.client("carol") as carol:
        lines = {b["bot"]: b for b in board(bob)["bots"]}
        assert {"alicebot", "bobbot"} <= set(lines) and lines["alicebot"]["owner"] == "alice"
        for b in (lines["alicebot"], lines["bobbot"]):
            assert set(b) >= {"bot", "owner", "version", "mu", "sigma", "matches", "bt"}
            assert b["matches"] % 2 == 0 and b["matches"] >= 6 and b["sigma"] < 25 / 3
        old_version = lines["alicebot"]["version"]
        rated = {v["version"]: v for v in alice.get("/api/bots/alicebot").json()["versions"]}[old_version]
        assert isinstance(rated["mu"], float) and rated["sigma"] < 25 / 3  # the version's page shows its rating

        # A new version replaces the old one in play; the old one keeps its history.
        new = upload(alice, bot_targz("alicebot")).json()
        assert verdict(alice, new["id"])["status"] == "accepted"
        wait_for("the new version in play", lambda: (got := line(bob, "alicebot")) and got["version"] == new["version"]
                 and got["matches"] >= 2)
        old_games = ladder_rows(server.folder, "SELECT count(*) FROM matches m JOIN entrants e ON e.entrant IN "
                                f"(m.seat0, m.seat1) WHERE e.label = 'alicebot@{old_version}'")[0][0]
        assert old_games >= 6

        # A late entrant joins without a restart, and meets both others at once (the floor).
        late = upload(carol, bot_targz("carolbot")).json()
        assert verdict(carol, late["id"])["status"] == "accepted"
        wait_for("the late entrant's games", lambda: (got := line(bob, "carolbot")) and got["matches"] >= 4)


def test_kill_9_then_restart_loses_nothing_and_counts_nothing_twice(competition: Server) -> None:
    server = competition
    with server.client("bob") as bob:
        # kill -9 the server process alone, with pairs in flight and an upload queued.
        queued = upload(bob, bot_targz("bobbot", source="greedy")).json()
        finished_before = ladder_rows(server.folder, "SELECT pair_index FROM pairs WHERE finished_at IS NOT NULL")
        assert server.process is not None
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=10)
    # Its workers, their bots, the validation and the fork server go with it.
    wait_for("no process of the killed server", lambda: not processes_mentioning(str(server.folder)), 20)

    server.start("--workers", "1")
    with server.client("bob") as bob:
        assert verdict(bob, queued["id"])["status"] == "accepted"
        wait_for("more pairs after the restart", lambda: board(bob)["pairs"] >= len(finished_before) + 4
                 and (got := line(bob, "bobbot")) is not None and got["version"] == queued["version"])
    # Every finished pair has exactly its two halves, each once, and no other pair has a match
    # (one query: the server goes on storing pairs meanwhile).
    pairs = ladder_rows(server.folder, "SELECT p.pair_index, p.finished_at IS NOT NULL, count(m.id), "
                        "coalesce(sum(m.half), 0) FROM pairs p LEFT JOIN matches m ON m.tournament_id = "
                        "p.tournament_id AND m.pair_index = p.pair_index GROUP BY p.pair_index")
    finished_after = {index for index, finished, _, _ in pairs if finished}
    assert {index for (index,) in finished_before} <= finished_after
    assert all((count, halves) == ((2, 1) if finished else (0, 0)) for _, finished, count, halves in pairs)


@pytest.mark.unit
def test_rating_takes_a_bounded_share_of_the_ladder_thread_however_long_it_runs() -> None:
    """Rating reads every stored match (29 us a pair, measured): after every pair, 20,000 pairs of
    50 ms would spend 92% of the thread rating at the end. Paced, it takes at most a tenth of
    the thread's time and still runs, more and more rarely."""
    now = [0.0]
    cost = [0.0]

    def rating() -> None:
        now[0] += cost[0]

    pace = RatingPace(share=0.1, clock=lambda: now[0])
    rated, rating_s = 0, 0.0
    for pair in range(20_000):
        now[0] += 0.05  # the pair's play
        cost[0] = 29e-6 * pair
        if pace.rate(rating):
            rated, rating_s = rated + 1, rating_s + cost[0]
    print(f"{rated} ratings in 20,000 pairs, {rating_s / now[0]:.1%} of the thread's time")
    assert rating_s / now[0] <= 0.1 and rated >= 100
