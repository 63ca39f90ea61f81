"""Slice 1: the data folder, accounts and tokens, the web login, rate and size limits."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.server import tokens

from .conftest import ROOT, Server, arena, init_server, last_line

pytestmark = pytest.mark.integration


def test_init_and_add_user_print_the_token_alone_on_the_last_line(make_server: Callable[..., Server]) -> None:
    server = make_server()
    organiser = server.tokens["organiser"]
    alice = server.add_user("alice")
    for token in (organiser, alice):
        assert tokens.token_id(token) is not None, token
    assert organiser != alice
    # Only hashes are stored: neither token nor its secret appears in the database file.
    raw = (server.folder / "server.sqlite").read_bytes()
    for token in (organiser, alice):
        assert token.encode() not in raw and token.split("_", 2)[2].encode() not in raw
    assert (server.folder / "server.sqlite").stat().st_mode & 0o077 == 0
    rows = sqlite3.connect(server.folder / "server.sqlite").execute("SELECT name, role FROM users").fetchall()
    assert sorted(rows) == [("alice", "participant"), ("organiser", "organiser")]


@pytest.fixture(scope="module")
def folder_with_alice(tmp_path_factory: pytest.TempPathFactory) -> Server:
    server = init_server(tmp_path_factory.mktemp("setup") / "data")
    server.add_user("alice")
    return server


@pytest.mark.parametrize(("args", "message"), [
    (["add-user", "{dir}", "alice"], "there is already an account named 'alice'"),
    (["add-user", "{dir}", "../evil"], "account name '../evil' is not allowed"),
    (["init", "{dir}"], "already holds a server"),
    (["add-user", "{dir}/nowhere", "bob"], "not a server data folder"),
    (["add-user", "{dir}", "bob", "--max-files", "0"], "--files must be positive"),
    (["run", "{dir}/nowhere"], "not a server data folder"),
    (["reset-token", "{dir}", "nobody"], "no account named 'nobody'"),
    (["run", "{dir}", "--workers", "0"], "--workers must be at least 1"),
])
def test_bad_set_up_commands_say_why_in_one_line(folder_with_alice: Server, args: list[str], message: str) -> None:
    server = folder_with_alice
    done = arena("server", *[a.format(dir=server.folder) for a in args], check=False)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_server_whose_bots_would_run_unsandboxed_refuses_to_start(tmp_path: Path) -> None:
    """A data folder with the default sandbox ('auto'), served where bubblewrap cannot run (here:
    not on the path), or on a cluster, whose worker machines would each resolve it for
    themselves: 'arena server run' refuses in one line, since strangers' uploads could run as
    the server's user. Before, it served them with a warning in its log."""
    folder = tmp_path / "data"
    arena("server", "init", str(folder))
    without_bwrap = dict(os.environ, PATH=str(Path(sys.executable).parent))
    done = subprocess.run([sys.executable, "-m", "arena.cli", "server", "run", str(folder)], env=without_bwrap,
                          capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
    assert done.returncode == 2, done.stderr
    assert "WITHOUT a sandbox" in done.stderr and "apt-get install bubblewrap" in done.stderr
    assert "--sandbox fallback" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    # On a cluster every worker machine would resolve 'auto' for itself: refused wherever the server runs.
    clustered = arena("server", "run", str(folder), "--cluster", "tcp://127.0.0.1:1", check=False)
    assert clustered.returncode == 2 and "--sandbox bwrap" in clustered.stderr, clustered.stderr


OTHER_HOST = "127.0.0.2"  # a client address of its own (all of 127/8 is this machine), not the proxy's


def idle_connection(port: int, head: bytes = b"") -> socket.socket:
    """A connection from ``OTHER_HOST`` that sends ``head`` (maybe nothing) and then waits."""
    sock = socket.socket()
    sock.bind((OTHER_HOST, 0))
    sock.connect(("127.0.0.1", port))
    if head:
        sock.sendall(head)
    return sock


def test_idle_connections_from_one_address_cannot_take_the_site_down(make_server: Callable[..., Server]) -> None:
    """300 connections from one address that send nothing took every slot of the server: it
    answered everyone 503 for as long as they stayed open. One address now holds at most 32;
    the others are closed at once, and the site answers."""
    server = make_server()
    server.start()
    held = [idle_connection(server.port) for _ in range(300)]
    try:
        with server.client() as anonymous:
            answer = anonymous.get("/api/health")
        print("health beside 300 idle connections:", answer.status_code)
        assert answer.status_code == 200
    finally:
        for sock in held:
            sock.close()


def test_a_connection_that_sends_no_whole_request_head_is_closed(make_server: Callable[..., Server]) -> None:
    """A connection that sends nothing, or trickles a request head, is closed once its deadline
    (10 s) passes without a whole head: before, uvicorn kept both open for as long as the
    client wished (its keep-alive timeout restarts at every byte)."""
    server = make_server()
    server.start()
    silent, trickling = idle_connection(server.port), idle_connection(server.port, b"GET /api/health HTTP/1.1\r\n")
    try:
        for sock in (silent, trickling):
            sock.settimeout(60.0)  # a bound far past the deadline, not a wait for it
            assert sock.recv(1) == b""  # closed by the server
    finally:
        silent.close()
        trickling.close()


def test_tokens_sessions_and_limits_on_a_running_server(make_server: Callable[..., Server]) -> None:
    server = make_server("--rate-burst", "40", "--rate-per-minute", "60")
    server.add_user("alice")
    server.start()
    with server.client("alice") as alice, server.client() as anonymous:
        assert alice.get("/api/me").json()["name"] == "alice"
        assert anonymous.get("/api/me").status_code == 401
        wrong = server.tokens["alice"][:-1] + ("A" if server.tokens["alice"][-1] != "A" else "B")
        for header in (f"Bearer {wrong}", "Bearer nonsense", "Basic abc", "Bearer"):
            answer = anonymous.get("/api/me", headers={"Authorization": header})
            assert answer.status_code == 401 and answer.json()["error"], header

        # Web login with the token: a cookie session, then logout needs the form's anti-forgery value.
        assert anonymous.post("/login", data={"token": wrong}).status_code == 401
        answer = anonymous.post("/login", data={"token": server.tokens["alice"]})
        assert answer.status_code == 303 and "arena_session" in anonymous.cookies
        cookie = answer.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie
        assert anonymous.get("/api/me").json()["name"] == "alice"
        assert "alice (participant)" in anonymous.get("/").text
        assert anonymous.post("/logout", data={"csrf": "forged"}).status_code == 403
        csrf = anonymous.get("/").text.split('name="csrf" value="')[1].split('"')[0]
        assert anonymous.post("/logout", data={"csrf": csrf}).status_code == 303
        anonymous.cookies.clear()

        # A body past the largest archive quota is refused before it is read.
        big = anonymous.post("/api/me", content=b"x" * (7 * 1024 * 1024))
        assert big.status_code == 413 and "too large" in big.json()["error"]

        # A reset token: the old one and its sessions stop working at once in the running
        # server (before the burst below: right after it, the old token's bucket is still empty).
        fresh = last_line(arena("server", "reset-token", str(server.folder), "alice").stdout)
        assert alice.get("/api/me").status_code == 401
        alice.headers["Authorization"] = f"Bearer {fresh}"
        assert alice.get("/api/me").json()["name"] == "alice"
        # The rate limit: a burst of 40, then 429 with Retry-After; another client is unaffected.
        statuses = [alice.get("/api/me").status_code for _ in range(45)]
        assert statuses.count(429) >= 1 and statuses[:30].count(200) == 30
        limited = alice.get("/api/me")
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert "too many requests" in limited.json()["error"]
        with server.client("organiser") as organiser:
            assert organiser.get("/api/me").json()["role"] == "organiser"
        # Web logins have their own, tighter limit per address (10 a minute): guessing is slow.
        logins = [anonymous.post("/login", data={"token": wrong}).status_code for _ in range(11)]
        assert logins.count(401) <= 10 and logins[-1] == 429


def test_invented_authorization_headers_buy_no_fresh_rate_buckets(make_server: Callable[..., Server]) -> None:
    server = make_server("--rate-burst", "40", "--rate-per-minute", "60")
    server.add_user("alice")
    server.start()
    with server.client("alice") as alice, server.client() as anonymous:
        assert alice.get("/api/me").json()["name"] == "alice"  # verified: a bucket of its own from now on
        statuses = [anonymous.get("/api/health", headers={"Authorization": f"Bearer x{n}"}).status_code
                    for n in range(200)]
        print(f"200 GETs with distinct bogus bearers: {statuses.count(200)} x 200, {statuses.count(429)} x 429")
        assert statuses.count(429) >= 100 and set(statuses) == {200, 429}
        # Well-formed guesses too: charged to the address, refused before any token check.
        guess = anonymous.get("/api/me", headers={"Authorization": "Bearer s66_0123456789abcdef_" + "A" * 43})
        assert guess.status_code == 429
        # The address is limited, not the participant it shares it with: a verified token keeps its own bucket.
        assert alice.get("/api/me").status_code == 200


def test_login_from_another_site_sets_no_cookie(make_server: Callable[..., Server]) -> None:
    server = make_server()
    server.add_user("mallory")
    server.start()
    token = server.tokens["mallory"]  # the attacker's: a victim logged in to it would upload to mallory
    for headers in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Origin": "null"},
                    {"Origin": server.url, "Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
                    {"Origin": server.url.replace("127.0.0.1", "localhost")}):
        with server.client() as victim:
            answer = victim.post("/login", data={"token": token}, headers=headers)
            print(headers, answer.status_code, answer.headers.get("set-cookie"))
            assert answer.status_code == 403 and "set-cookie" not in answer.headers, headers
            assert "arena_session" not in victim.cookies and victim.get("/api/me").status_code == 401
    # This site's own login page (as a browser posts it) and header-less clients still log in.
    for headers in ({"Origin": server.url, "Sec-Fetch-Site": "same-origin"}, {"Origin": server.url}, {}):
        with server.client() as browser:
            answer = browser.post("/login", data={"token": token}, headers=headers)
            assert answer.status_code == 303 and "arena_session" in browser.cookies, headers
            assert browser.get("/api/me").json()["name"] == "mallory"
