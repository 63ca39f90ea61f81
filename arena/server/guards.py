"""ASGI middleware that guards every request: rate limits and a cap on the request body.

Both answer JSON ``{"error": reason}`` before the application sees the request: 429 with
``Retry-After`` past a client's rate, 413 past the body cap (checked on ``Content-Length`` and
again while the body streams in, for chunked uploads).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from arena.server import tokens

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


MAX_CLIENTS = 10_000  # buckets kept before the full ones are dropped


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    """Token buckets by client key: ``per_minute`` refilled evenly, at most ``burst`` at once."""

    def __init__(self, per_minute: int, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """Spend one request of ``key``'s; 0.0 if allowed, else the seconds until one is free."""
        now = self.clock()
        with self._lock:
            if len(self._buckets) > MAX_CLIENTS:  # forget the clients whose buckets refilled
                self._buckets = {k: b for k, b in self._buckets.items()
                                 if b.tokens + (now - b.at) * self.rate < self.burst}
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(self.burst, now)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
            bucket.at = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return 0.0
            return (1.0 - bucket.tokens) / self.rate if self.rate > 0 else math.inf


def _never(token: str) -> bool:
    return False


def client_key(scope: Scope, verified: Callable[[str], bool] = _never) -> str:
    """Who is asking: a bearer token the server verified (hashed), else the client address.

    A token counts as a client of its own only once ``verified(token)`` says the server
    checked it: any other ``Authorization`` value (junk, a guess, a token not checked yet) is
    charged to the address, so inventing headers buys no fresh buckets.
    """
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            token = tokens.bearer(value.decode("latin-1"))
            if token is not None and verified(token):
                return "token:" + tokens.fingerprint(token)[:24]  # the token, however the header is spelt
            break
    client = scope.get("client")
    return "addr:" + (client[0] if client else "?")


async def send_error(send: Send, status: int, reason: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """Answer ``{"error": reason}`` with ``status``."""
    body = json.dumps({"error": reason}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


class RateLimit:
    """429 for a client past its request rate; logins (``POST /login``) have their own, tighter one.

    A client is a verified bearer token, else the address (see ``client_key``).
    """

    def __init__(self, app: ASGIApp, requests: RateLimiter, logins: RateLimiter,
                 verified: Callable[[str], bool] = _never) -> None:
        self.app = app
        self.requests = requests
        self.logins = logins
        self.verified = verified  # whether a bearer token was verified (cheap: no scrypt)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        wait = self.requests.take(client_key(scope, self.verified))
        if not wait and scope["method"] == "POST" and scope["path"] == "/login":
            client = scope.get("client")
            wait = self.logins.take(client[0] if client else "?")
        if wait:
            seconds = max(1, math.ceil(wait))
            await send_error(send, 429, f"too many requests: try again in {seconds} s",
                             [(b"retry-after", str(seconds).encode())])
            return
        await self.app(scope, receive, send)


class BodyTooLarge(Exception):
    """The request body went past the cap while it was being read."""


class BodyLimit:
    """413 for a request whose body is larger than ``max_bytes``."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        reason = f"request body too large: at most {self.max_bytes} bytes"
        for name, value in scope.get("headers", []):
            if name == b"content-length" and (not value.isdigit() or int(value) > self.max_bytes):
                await send_error(send, 413, reason)
                return
        seen = 0

        async def counted_receive() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise BodyTooLarge(reason)  # the application answers 413 (see its exception handlers)
            return message

        await self.app(scope, counted_receive, send)
