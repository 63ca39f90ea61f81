"""The rate limiter's token buckets, on a fake clock."""

from __future__ import annotations

import pytest

from arena.server import guards
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
