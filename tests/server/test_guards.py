"""The rate limiter's token buckets, on a fake clock; which requests pay for a token check, and where."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena.server import guards, tokens
from arena.server.guards import RateLimiter

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate_then_a_refill() -> None:
    clock = Clock()
    limiter = RateLimiter(per_minute=60, burst=3, clock=clock)
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a") == pytest.approx(1.0)  # one a second
    assert limiter.take("b") == 0.0  # another client has its own bucket
    clock.now = 0.5
    assert limiter.take("a") == pytest.approx(0.5)
    clock.now = 10.0
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]  # refilled up to the burst, no more
    assert limiter.take("a") > 0


def test_full_buckets_are_forgotten_past_the_client_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guards, "MAX_CLIENTS", 5)
    clock = Clock()
    limiter = RateLimiter(per_minute=60, burst=2, clock=clock)
    for n in range(6):
        limiter.take(f"client{n}")
    clock.now = 1.0  # the clients' buckets are full again
    limiter.take("busy")
    limiter.take("busy")  # its bucket is empty: it must be kept
    limiter.take("new")  # 7 clients known: the full buckets go
    assert set(limiter._buckets) == {"busy", "new"}
    assert limiter.take("busy") > 0  # still limited


def test_only_a_verified_token_has_a_bucket_of_its_own() -> None:
    def scope(*headers: tuple[bytes, bytes]) -> guards.Scope:
        return {"type": "http", "headers": list(headers), "client": ("10.0.0.7", 5555)}

    good = "s66_0123456789abcdef_" + "A" * 43
    verified = {good}.__contains__
    # Junk, a guess of the right shape and other schemes: all charged to the address.
    for value in (b"Bearer x1", b"Bearer s66_fedcba9876543210_" + b"B" * 43, b"Basic abc", b"Bearer", b""):
        assert guards.client_key(scope((b"authorization", value)), verified) == "addr:10.0.0.7", value
    # A verified token is one client however its header is spelt (no fresh buckets by respelling).
    keys = {guards.client_key(scope((b"authorization", spelt.encode())), verified)
            for spelt in (f"Bearer {good}", f"bearer {good}", f"BEARER   {good}  ")}
    assert len(keys) == 1 and keys.pop().startswith("token:")
    assert guards.client_key(scope((b"authorization", f"Bearer {good}".encode()))) == "addr:10.0.0.7"


@pytest.fixture
def data_folder(tmp_path: Path) -> tuple[Path, str, str]:
    """A data folder made in-process: the organiser's token and alice's."""
    from arena.server.config import ServerConfig
    from arena.server.setup import add_participant, init_folder

    _, organiser = init_folder(tmp_path / "data", ServerConfig())
    _, alice = add_participant(tmp_path / "data", "alice")
    return tmp_path / "data", organiser, alice


def counting_scrypt(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Patch the token hash to record each call: whether it ran on a thread with a running event loop."""
    calls: list[bool] = []
    real = tokens._scrypt

    def scrypt(secret: str, salt: bytes) -> bytes:
        try:
            asyncio.get_running_loop()
            calls.append(True)
        except RuntimeError:
            calls.append(False)
        return real(secret, salt)

    monkeypatch.setattr(tokens, "_scrypt", scrypt)
    return calls


def test_a_token_not_of_the_issued_shape_costs_no_scrypt(data_folder: tuple[Path, str, str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.server.db import ServerDB

    folder, _, alice = data_folder
    db = ServerDB(folder)
    calls = counting_scrypt(monkeypatch)
    malformed = ["nonsense", "x1", "", "s66_", "s66_0123456789abcdef_short", alice + "x", alice[:-1] + "!",
                 alice.upper(), "s66_0123456789ABCDEF_" + "A" * 43, " " + alice]
    assert [db.user_by_token(t) for t in malformed] == [None] * len(malformed)
    print(f"scrypt calls for {len(malformed)} malformed tokens: {len(calls)}")
    assert calls == []
    # A well-formed wrong token costs one hash (a dummy one for an unknown id), and no more when retried.
    guess = "s66_0123456789abcdef_" + "A" * 43
    assert db.user_by_token(guess) is None and db.user_by_token(guess) is None
    assert len(calls) == 1
    user = db.user_by_token(alice)
    assert user is not None and user.name == "alice" and len(calls) == 2
    assert db.user_by_token(alice) is not None and len(calls) == 2  # verified tokens are cached
    assert db.is_verified(alice) and not db.is_verified(guess)
    db.close()


def test_tokens_are_checked_off_the_event_loop(data_folder: tuple[Path, str, str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx

    from arena.server.app import make_app

    folder, _, _ = data_folder
    calls = counting_scrypt(monkeypatch)
    app = make_app(folder, on_submission=lambda: None, on_change=lambda: None)
    guesses = iter(f"s66_{n:016x}_" + "A" * 43 for n in range(100))  # well formed: each costs a hash
    requests = (("POST", "/api/submissions"), ("POST", "/submit"), ("POST", "/api/admin/pause"),
                ("POST", "/admin/pause"), ("POST", "/api/admin/bots/x/disable"), ("GET", "/api/me"),
                ("GET", "/submit"))

    async def ask() -> list[int]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://arena.test") as client:
            return [(await client.request(method, path, headers={"Authorization": f"Bearer {next(guesses)}"}))
                    .status_code for method, path in requests]

    assert asyncio.run(ask()) == [401] * len(requests)
    on_loop = calls.count(True)
    print(f"scrypt calls: {len(calls)}, on the event loop's thread: {on_loop}")
    assert len(calls) >= len(requests) and on_loop == 0
