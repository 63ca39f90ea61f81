"""The competition server's ASGI application (Starlette), assembled from its route modules.

Starlette rather than FastAPI: the API is a handful of routes with hand-checked inputs and
typed records of our own, so FastAPI's pydantic layer would add a dependency and a second
way of describing data without doing a job here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from arena.server import accounts, admin, submissions, views
from arena.server.config import MiB
from arena.server.db import ServerDB
from arena.server.guards import ASGIApp, BodyLimit, RateLimit, RateLimiter
from arena.server.standings import BoardCache
from arena.server.web import EXCEPTION_HANDLERS, REPORT, STATIC

FORM_OVERHEAD = 1 * MiB  # room for the multipart framing and the other fields around an archive


def health(request: Request) -> Response:
    """``{"ok": true}`` once the server answers (for probes and proxies)."""
    return JSONResponse({"ok": True})


def make_app(folder: Path, *, on_submission: Callable[[], None], on_change: Callable[[], None]) -> ASGIApp:
    """The whole server for data folder ``folder``, guards included.

    ``on_submission`` is called after each upload is queued (it wakes the validation queue),
    ``on_change`` after the organiser changed what the ladder plays (it wakes the ladder).
    """
    db = ServerDB(folder)
    config = db.config()
    app = Starlette(
        routes=[Route("/api/health", health, methods=["GET"]), *accounts.ROUTES, *submissions.ROUTES, *views.ROUTES, *admin.ROUTES,
                Mount("/static/report", StaticFiles(directory=REPORT / "static"), name="report-static"),
                Mount("/static", StaticFiles(directory=STATIC), name="static")],
        exception_handlers=EXCEPTION_HANDLERS,
    )
    app.state.db = db
    app.state.on_submission = on_submission
    app.state.on_change = on_change
    app.state.boards = BoardCache(folder)
    largest = max([config.quotas.archive_bytes, *(u.quotas.archive_bytes for u in db.users())])
    guarded = BodyLimit(app, largest + FORM_OVERHEAD)
    return RateLimit(guarded, RateLimiter(config.rate_per_minute, config.rate_burst),
                     RateLimiter(config.login_per_minute, config.login_per_minute), verified=db.is_verified)
