"""The authorization matrix: every endpoint for the organiser, the owner (alice), another
participant (mallory) and an anonymous viewer; also mallory submitting as alice and a forged
form posted with the organiser's cookie."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from .archives import bot_targz
from .conftest import Server
from .helpers import upload

pytestmark = pytest.mark.integration

ROLES = ("organiser", "alice", "mallory", None)
PUBLIC = {"organiser": 200, "alice": 200, "mallory": 200, None: 200}
SIGNED_IN = {"organiser": 200, "alice": 200, "mallory": 200, None: 401}
OWNER = {"organiser": 200, "alice": 200, "mallory": 403, None: 401}
ORGANISER = {"organiser": 200, "alice": 403, "mallory": 403, None: 401}
PARTICIPANT_FORBIDDEN = {"alice": 403, "mallory": 403, None: 401}  # the organiser's own calls: test_admin


@pytest.fixture(scope="module")
def clients(competition: Server) -> Iterator[dict[str | None, httpx.Client]]:
    made = {role: competition.client(role) for role in ROLES}
    yield made
    for client in made.values():
        client.close()


def alice_submission(clients: dict[str | None, httpx.Client]) -> int:
    subs = clients["alice"].get("/api/submissions").json()["submissions"]
    return int(subs[-1]["id"])


def reads(clients: dict[str | None, httpx.Client]) -> list[tuple[str, dict[str | None, int]]]:
    sid = alice_submission(clients)
    match = clients[None].get("/api/matches").json()["matches"][0]["match_id"]
    return [
        ("/api/health", PUBLIC), ("/api/leaderboard", PUBLIC), ("/", PUBLIC), ("/api/matches", PUBLIC),
        (f"/api/matches/{match}", PUBLIC), (f"/matches/{match}", PUBLIC), ("/api/bots/alicebot", PUBLIC),
        ("/bots/alicebot", PUBLIC), ("/api/settle", PUBLIC), ("/settle", PUBLIC), ("/matches", PUBLIC),
        ("/login", PUBLIC),
        ("/api/me", SIGNED_IN), ("/api/submissions", SIGNED_IN), ("/submissions", SIGNED_IN), ("/submit", SIGNED_IN),
        (f"/api/submissions/{sid}", OWNER), (f"/submissions/{sid}", OWNER),
        ("/api/bots/alicebot/logs", OWNER), ("/bots/alicebot/logs", OWNER), ("/api/bots/alicebot/code", OWNER),
        ("/api/admin/state", ORGANISER), ("/admin", ORGANISER),
    ]


def test_every_read_for_every_role(clients: dict[str | None, httpx.Client]) -> None:
    wrong = []
    for path, expected in reads(clients):
        for role in ROLES:
            answer = clients[role].get(path)
            if answer.status_code != expected[role]:
                wrong.append(f"{role or 'anonymous'} GET {path}: {answer.status_code}, expected {expected[role]}")
            elif answer.status_code >= 400 and path.startswith("/api/"):
                assert answer.json()["error"], path
    assert not wrong, "\n".join(wrong)


def test_others_see_nothing_of_alices_private_things(clients: dict[str | None, httpx.Client]) -> None:
    mine = clients["mallory"].get("/api/submissions").json()["submissions"]
    assert all(s["owner"] == "mallory" for s in mine)
    everyone = clients["organiser"].get("/api/submissions").json()["submissions"]
    assert {"alice", "bob"} <= {s["owner"] for s in everyone}
    public = clients[None].get("/api/bots/alicebot").json()
    assert "logs" not in public and "report" not in str(public)
    assert "stderr logs" not in clients["mallory"].get("/bots/alicebot").text
    assert "stderr logs" in clients["alice"].get("/bots/alicebot").text


@pytest.mark.parametrize("path", ["/api/admin/bots/alicebot/disable", "/api/admin/bots/alicebot/enable",
                                  "/api/admin/pause", "/api/admin/resume", "/api/admin/freeze",
                                  "/api/admin/unfreeze", "/api/admin/settle", "/admin/pause",
                                  "/admin/bots/alicebot/disable"])
def test_admin_actions_are_the_organisers_alone(clients: dict[str | None, httpx.Client], path: str) -> None:
    for role, status in PARTICIPANT_FORBIDDEN.items():
        answer = clients[role].post(path, json={"reason": "mine now", "pairs": 1})
        assert answer.status_code == status, (role, path, answer.text)
    state = clients["organiser"].get("/api/admin/state").json()
    assert not state["paused"] and not state["frozen"] and "alicebot" not in state["disabled"]


def test_the_organiser_disables_and_nobody_else(clients: dict[str | None, httpx.Client]) -> None:
    done = clients["organiser"].post("/api/admin/bots/alicebot/disable", json={"reason": "authz check"})
    assert done.status_code == 200 and done.json() == {"bot": "alicebot", "disabled": "authz check"}
    try:
        assert clients["organiser"].post("/api/admin/bots/nobody/disable", json={"reason": "x"}).status_code == 404
        assert clients["organiser"].post("/api/admin/bots/alicebot/disable", json={}).status_code == 400
    finally:
        assert clients["organiser"].post("/api/admin/bots/alicebot/enable", json={}).status_code == 200


def test_mallory_cannot_submit_as_alice_or_forge_the_organisers_forms(competition: Server,
                                                                      clients: dict[str | None, httpx.Client]) -> None:
    taken = upload(clients["mallory"], bot_targz("alicebot"))
    assert taken.status_code == 403 and "belongs to another participant" in taken.json()["error"]
    assert upload(clients[None], bot_targz("anybot")).status_code == 401
    with competition.client() as browser:  # the organiser's browser, logged in with a cookie
        assert browser.post("/login", data={"token": competition.tokens["organiser"]}).status_code == 303
        forged = browser.post("/admin/pause", data={})  # a cross-site form has no anti-forgery value
        assert forged.status_code == 403
        forged_json = browser.post("/api/admin/pause", json={})
        assert forged_json.status_code == 403
    assert clients["organiser"].get("/api/admin/state").json()["paused"] is False
