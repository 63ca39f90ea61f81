"""Slice 2: uploads over HTTP and with ``arena submit --server``, validated in the sandbox."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from .archives import bot_folder, bot_targz, member, targz
from .conftest import Server, arena

pytestmark = pytest.mark.integration

FAST = ("--time-limit-ms", "300", "--handshake-ms", "5000", "--bank-ms", "2000")


def upload(client: httpx.Client, data: bytes, name: str = "bot.tar.gz") -> httpx.Response:
    return client.post("/api/submissions", files={"archive": (name, data, "application/gzip")})


def verdict(client: httpx.Client, sid: int, timeout_s: float = 60.0) -> dict[str, Any]:
    """Poll the submission until it is accepted or rejected."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(f"/api/submissions/{sid}").json()
        if body["status"] in ("accepted", "rejected"):
            return body
        time.sleep(0.2)  # polling a status with a deadline
    raise AssertionError(f"submission {sid} still {body['status']} after {timeout_s} s")


def test_upload_validate_accept_and_reject(make_server: Callable[..., Server], tmp_path: Path) -> None:
    server = make_server(*FAST)
    server.add_user("alice")
    server.add_user("bob")
    server.start()
    with server.client("alice") as alice, server.client("bob") as bob:
        first = upload(alice, bot_targz("alicebot"))
        assert first.status_code == 201, first.text
        body = first.json()
        assert body == {"id": body["id"], "bot": "alicebot", "version": 1, "status": "queued"}
        bad = upload(alice, bot_targz("alicebot", source="faulty/illegal"))
        assert bad.status_code == 201 and bad.json()["version"] == 2

        good = verdict(alice, body["id"])
        assert good["status"] == "accepted" and good["report"]["passed"] is True
        assert [s["status"] for s in good["report"]["steps"]] == ["pass"] * 12
        rejected = verdict(alice, bad.json()["id"])
        assert rejected["status"] == "rejected" and not rejected["report"]["passed"]
        assert "failed step" in rejected["reason"]
        # Nothing of a rejected submission is kept to be played.
        files = server.folder / "submissions" / str(bad.json()["id"]) / "files"
        assert not files.exists()

        # The status page shows the whole report.
        page = alice.get(f"/submissions/{bad.json()['id']}")
        assert page.status_code == 200 and 'data-status="rejected"' in page.text
        assert all(f'data-step="{s["name"]}"' in page.text for s in rejected["report"]["steps"])
        assert [s["id"] for s in alice.get("/api/submissions").json()["submissions"]] == [bad.json()["id"], body["id"]]

        # Bob may not take over alice's bot name, nor read her submissions.
        taken = upload(bob, bot_targz("alicebot"))
        assert taken.status_code == 403 and "belongs to another participant" in taken.json()["error"]
        assert bob.get(f"/api/submissions/{body['id']}").status_code == 403

        # A hostile archive answers 400 with the reason, and queues nothing.
        hostile = upload(bob, targz([("bot.toml", b"x"), member("x", b"3")]))
        assert hostile.status_code == 400 and "device, FIFO" in hostile.json()["error"]
        assert bob.get("/api/submissions").json()["submissions"] == []
        for data, reason in ((b"garbage", "not a .tar.gz or .zip"),
                             (targz([("bot.toml", b"name = 'x'\n")]), "bot.toml"),
                             (targz([("bot.toml", b"x"), ("../up", b"x")]), "'..'")):
            answer = upload(bob, data)
            assert answer.status_code == 400 and reason in answer.json()["error"], answer.text
        assert bob.post("/api/submissions", data={"archive": "text"}).status_code == 400

        # The command line packs a folder and uploads it.
        folder = bot_folder(tmp_path, "bobbot")
        (folder / "__pycache__").mkdir()
        (folder / "__pycache__" / "junk.pyc").write_bytes(b"junk")
        done = arena("submit", "--server", server.url, "--token", server.tokens["bob"], str(folder), "--wait")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "submitted bobbot version 1" in done.stdout and "accepted" in done.stdout.splitlines()[-1]
        refused = arena("submit", "--server", server.url, "--token", server.tokens["bob"],
                        str(bot_folder(tmp_path / "b", "alicebot")), check=False)
        assert refused.returncode == 1 and "belongs to another participant" in refused.stdout


def test_quotas_per_day_and_size(make_server: Callable[..., Server]) -> None:
    server = make_server(*FAST, "--archive-mib", "0.05")
    server.add_user("carol", "--submissions-per-day", "1")
    server.start()
    with server.client("carol") as carol:
        assert upload(carol, bot_targz("carolbot")).status_code == 201
        again = upload(carol, bot_targz("carolbot"))
        assert again.status_code == 429 and "daily quota" in again.json()["error"]
    server.add_user("dave")
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
