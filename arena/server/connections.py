"""Connection limits under uvicorn: a deadline for each request's head, and connections per address.

uvicorn answers 503 to everyone once ``limit_concurrency`` connections are open, and it closes
a connection that never sends a request only when the client does. So 260 plain TCP connections
that send nothing took the whole site down for as long as they stayed open (a red-team run),
and a client trickling a request head byte by byte holds a connection forever. Here:

- a connection must send a whole request head within ``HEAD_TIMEOUT_S`` of opening, and of the
  end of its last response (uvicorn's own keep-alive timeout restarts at every byte);
- one address may hold at most ``PER_ADDRESS`` connections; more are closed at once. The
  reverse proxy's address (``PROXY``, whose clients the proxy itself limits: see
  docs/server.md) is exempt.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 10.0
PER_ADDRESS = 32
PROXY = "127.0.0.1"  # the one address uvicorn trusts for X-Forwarded-For (arena.server.run)


class LimitedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the limits of this module."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        host = self.client[0] if self.client else None
        if host is not None and host != PROXY:
            held = sum(1 for other in self.connections
                       if isinstance(other, H11Protocol) and other.client and other.client[0] == host)
            if held > PER_ADDRESS:
                transport.close()
                return
        self._await_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._await_head()  # the next request's

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        super().connection_lost(exc)

    def _await_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self._close_if_no_request)

    def _close_if_no_request(self) -> None:
        """The deadline passed: close unless a request's head came (it is being answered)."""
        self._head_timer = None
        waiting = self.cycle is None or self.cycle.response_complete
        if waiting and not self.transport.is_closing():
            try:
                self.conn.send(h11.ConnectionClosed())
            except h11.LocalProtocolError:  # the state does not allow it: close all the same
                pass
            self.transport.close()
