"""Helpers shared by the HTML pages and the JSON API: answers, templates, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

import results.report
from arena.server.auth import HTTPError, csrf_token, current_user
from arena.server.guards import BodyTooLarge

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
REPORT = Path(results.report.__file__).parent  # the HTML report's hand replay (template, script, style)

_env = Environment(
    loader=ChoiceLoader([FileSystemLoader(TEMPLATES), PrefixLoader({"report": FileSystemLoader(REPORT / "templates")})]),
    autoescape=select_autoescape(["j2", "html"]), trim_blocks=True, lstrip_blocks=True)


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """Render ``template`` with the viewer and the form's anti-forgery value."""
    try:
        user = current_user(request)
    except HTTPError:
        user = None
    html = _env.get_template(template).render(user=user, csrf=csrf_token(request), **context)
    return HTMLResponse(html, status_code=status)


def is_api(request: Request) -> bool:
    """Whether the request is for the JSON API (errors answer JSON there, a page elsewhere)."""
    return request.url.path.startswith("/api/")


async def http_error(request: Request, exc: Exception) -> Response:
    """``{"error": reason}`` for the API, an error page for the web."""
    status, reason = (exc.status, exc.reason) if isinstance(exc, HTTPError) else (413, str(exc))
    if is_api(request):
        return JSONResponse({"error": reason}, status_code=status)
    # In a thread: the page names the viewer, and a bearer token costs scrypt.
    return await run_in_threadpool(page, request, "error.html.j2", status=status, code=status, reason=reason)


EXCEPTION_HANDLERS = {HTTPError: http_error, BodyTooLarge: http_error}
