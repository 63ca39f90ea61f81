"""Slice 2: uploads over HTTP and with ``arena submit --server``, validated in the sandbox."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.server.config import Quotas
from arena.server.db import ServerDB
from arena.server.submissions import INCOMING, clear_incoming

from .archives import bot_folder, bot_targz, member, targz
from .conftest import FAST, Server, arena
from .helpers import upload, verdict

pytestmark = pytest.mark.integration


def test_upload_validate_accept_and_reject(competition: Server, tmp_path: Path) -> None:
    server = competition
    with server.client("alice") as alice, server.client("bob") as bob, server.client("carol") as carol:
        mine = alice.get("/api/submissions").json()["submissions"]
        accepted = verdict(alice, mine[-1]["id"])
        assert accepted["status"] == "accepted" and accepted["report"]["passed"] is True
        assert [s["status"] for s in accepted["report"]["steps"]] == ["pass"] * 12

        bad = upload(alice, bot_targz("alicebot", source="faulty/illegal"))
        body = bad.json()
        assert bad.status_code == 201 and body == {"id": body["id"], "bot": "alicebot",
                                                   "version": body["version"], "status": "queued"}
        assert body["version"] >= 2
        rejected = verdict(alice, body["id"])
        assert rejected["status"] == "rejected" and not rejected["report"]["passed"]
        assert "failed step" in rejected["reason"]
        # Nothing of a rejected submission is kept to be played.
        assert not (server.folder / "submissions" / str(body["id"]) / "files").exists()
        assert all(b["version"] != body["version"] for b in alice.get("/api/leaderboard").json()["bots"]
                   if b["bot"] == "alicebot")

        # The status page shows the whole report.
        page = alice.get(f"/submissions/{body['id']}")
        assert page.status_code == 200 and 'data-status="rejected"' in page.text
        assert all(f'data-step="{s["name"]}"' in page.text for s in rejected["report"]["steps"])
        if rejected["report"].get("sandbox_view"):
            assert 'id="sandbox-view"' in page.text
        assert alice.get("/api/submissions").json()["submissions"][0]["id"] == body["id"]

        # Bob may not take over alice's bot name.
        taken = upload(bob, bot_targz("alicebot"))
        assert taken.status_code == 403 and "belongs to another participant" in taken.json()["error"]

        # A hostile archive answers 400 with the reason, and queues nothing.
        before = carol.get("/api/submissions").json()["submissions"]
        hostile = upload(carol, targz([("bot.toml", b"x"), member("x", b"3")]))
        assert hostile.status_code == 400 and "device, FIFO" in hostile.json()["error"]
        for data, reason in ((b"garbage", "not a .tar.gz or .zip"),
                             (targz([("bot.toml", b"name = 'x'\n")]), "bot.toml"),
                             (targz([("bot.toml", b"x"), ("../up", b"x")]), "'..'")):
            answer = upload(carol, data)
            assert answer.status_code == 400 and reason in answer.json()["error"], answer.text
        assert carol.post("/api/submissions", data={"archive": "text"}).status_code == 400
        assert carol.get("/api/submissions").json()["submissions"] == before
        assert not list((server.folder / "incoming").iterdir())

    # The command line packs a folder (leaving caches out) and uploads it.
    folder = bot_folder(tmp_path, "clibot")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "junk.pyc").write_bytes(b"junk")
    done = arena("submit", "--server", server.url, "--token", server.tokens["carol"], str(folder), "--wait")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "submitted clibot version 1" in done.stdout and "accepted" in done.stdout.splitlines()[-1]
    refused = arena("submit", "--server", server.url, "--token", server.tokens["carol"],
                    str(bot_folder(tmp_path / "b", "alicebot")), check=False)
    assert refused.returncode == 1 and "belongs to another participant" in refused.stdout
    unreachable = arena("submit", "--server", "http://127.0.0.1:9", "--token", "x", str(folder), check=False)
    assert unreachable.returncode == 2 and "cannot reach the server" in unreachable.stderr


def test_quotas_per_day_and_size(make_server: Callable[..., Server]) -> None:
    server = make_server(*FAST, "--archive-mib", "0.05")
    server.add_user("carol", "--submissions-per-day", "1")
    server.add_user("dave")
    server.start()
    with server.client("carol") as carol:
        assert upload(carol, bot_targz("carolbot")).status_code == 201
        again = upload(carol, bot_targz("carolbot"))
        assert again.status_code == 429 and "daily quota" in again.json()["error"]
    with server.client("dave") as dave:
        big = upload(dave, targz([("bot.toml", b"x"), ("noise", os.urandom(80_000))]))
        assert big.status_code == 413 and "archive over the quota" in big.json()["error"]

        def chunks() -> Any:  # a well-formed multipart file part that never ends, without Content-Length
            yield (b'--xyz\r\nContent-Disposition: form-data; name="archive"; filename="a.tar.gz"\r\n'
                   b"Content-Type: application/gzip\r\n\r\n")
            for _ in range(40):
                yield b"y" * 65536

        streamed = dave.post("/api/submissions", content=chunks(),
                             headers={"content-type": "multipart/form-data; boundary=xyz"})
        assert streamed.status_code == 413 and "too large" in streamed.json()["error"]


def test_concurrent_uploads_cannot_pass_the_daily_quota(make_server: Callable[..., Server]) -> None:
    server = make_server(*FAST)
    server.add_user("racer", "--submissions-per-day", "3")
    server.start()
    data = bot_targz("racebot")

    async def race() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=server.url, timeout=120.0, limits=httpx.Limits(max_connections=30),
                                     headers={"Authorization": f"Bearer {server.tokens['racer']}"}) as client:
            return await asyncio.gather(*(client.post("/api/submissions", files={"archive": ("b.tar.gz", data)})
                                          for _ in range(30)))

    answers = asyncio.run(race())
    codes = [a.status_code for a in answers]
    with server.client("racer") as racer:
        stored = racer.get("/api/submissions").json()["submissions"]
    print(f"30 concurrent uploads, quota 3: {codes.count(201)} x 201, {codes.count(429)} x 429, {len(stored)} stored")
    assert codes.count(201) == 3 and codes.count(429) == 27
    assert all(a.json()["error"] == "daily quota reached: at most 3 submissions in 24 hours"
               for a in answers if a.status_code == 429)
    assert len(stored) == 3 and sorted(s["version"] for s in stored) == [1, 2, 3]
    assert not list((server.folder / "incoming").iterdir())  # the refused uploads' unpacked files are gone


@pytest.mark.unit
def test_clear_incoming_survives_a_leftover_it_cannot_remove(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A leftover whose removal raises (an 1100-deep tree made shutil.rmtree raise RecursionError
    on Python 3.11 and 3.12, and the server then exited at every start) is logged and left; the
    other leftovers are removed and the server starts."""
    incoming = tmp_path / INCOMING
    for name in ("deep", "plain"):
        (incoming / name / "bot").mkdir(parents=True)
    real_rmtree = shutil.rmtree

    def rmtree(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).name == "deep":
            raise RecursionError("maximum recursion depth exceeded")
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    with caplog.at_level(logging.WARNING, logger="arena.server.submissions"):
        clear_incoming(tmp_path)  # before: the RecursionError escaped
    assert not (incoming / "plain").exists() and (incoming / "deep").exists()
    assert any("deep" in r.getMessage() and "RecursionError" in r.getMessage() for r in caplog.records)


@pytest.mark.unit
def test_the_validation_queue_takes_turns_among_participants(tmp_path: Path) -> None:
    """mallory queues three submissions, then alice one: alice's is validated second, not after
    all of mallory's (one validator serves everyone; a participant with many or slow submissions
    would otherwise hold everybody else's back)."""
    db = ServerDB(tmp_path, create=True)
    (mallory, _), (alice, _) = (db.add_user(name, "participant", Quotas()) for name in ("mallory", "alice"))
    queued = [db.add_submission(user, f"{user.name}bot", 100, lambda sid: f"submissions/{sid}")
              for user in (mallory, mallory, mallory, alice)]
    served: list[str] = []
    while (claimed := db.claim_queued()) is not None:
        served.append(claimed.owner)
        db.finish_submission(claimed.id, False, None, "test")
    db.close()
    print("validated in turn:", served)
    assert len(queued) == 4 and served == ["mallory", "alice", "mallory", "mallory"]
