"""The organiser's actions: disable or enable a bot, pause or resume the ladder, freeze or unfreeze
submissions, start the settle phase. Each is logged in the event log; the API takes JSON (or a
form, from the admin page, with its anti-forgery value)."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from arena.server.auth import CSRF_FIELD, HTTPError, check_csrf, db_of, require_organiser
from arena.server.settle import SETTLE_STATE, settle_json
from arena.server.web import page

MAX_REASON = 500


async def _body(request: Request) -> dict[str, Any]:
    """The request's fields: a JSON object, or a form (whose anti-forgery value is checked)."""
    if request.headers.get("content-type", "").startswith("application/json"):
        try:
            data = await request.json()
        except ValueError:
            raise HTTPError(400, "the body is not valid JSON") from None
        if not isinstance(data, dict):
            raise HTTPError(400, "the body must be a JSON object")
        check_csrf(request, None)
        return data
    form = await request.form(max_files=0, max_fields=8)
    check_csrf(request, str(form.get(CSRF_FIELD, "")))
    return {k: v for k, v in form.items() if k != CSRF_FIELD}


def _answer(request: Request, body: dict[str, Any]) -> Response:
    """JSON for the API, back to the admin page for its forms."""
    if request.url.path.startswith("/api/"):
        return JSONResponse(body)
    return RedirectResponse("/admin", status_code=303)


def state_json(request: Request) -> dict[str, Any]:
    """The ladder's switches, the bots out of play and the newest events."""
    db = db_of(request)
    return {"paused": bool(db.get_state("paused", False)), "frozen": bool(db.get_state("frozen", False)),
            "settle": settle_json(db), "disabled": {b.name: b.disabled_reason for b in db.bots() if b.disabled},
            "events": [{"at": e["at"], "actor": e["actor"], "what": e["what"]} for e in db.events(50)]}


async def disable(request: Request) -> Response:
    """``POST /api/admin/bots/{bot}/disable`` ``{"reason"}``: out of play, its results out of the standings."""
    user = await run_in_threadpool(require_organiser, request)
    body = await _body(request)
    reason = str(body.get("reason", "")).strip()
    if not reason or len(reason) > MAX_REASON:
        raise HTTPError(400, f"give the reason shown to everyone: 'reason', 1 to {MAX_REASON} characters")
    db = db_of(request)
    name = request.path_params["bot"]
    if not db.set_disabled(name, reason, actor=user.name):
        raise HTTPError(404, f"no bot named {name!r}")
    request.app.state.on_change()
    return _answer(request, {"bot": name, "disabled": reason})


async def enable(request: Request) -> Response:
    """``POST /api/admin/bots/{bot}/enable``: back in play, its results back in the standings."""
    user = await run_in_threadpool(require_organiser, request)
    await _body(request)
    name = request.path_params["bot"]
    if not db_of(request).set_disabled(name, None, actor=user.name):
        raise HTTPError(404, f"no bot named {name!r}")
    request.app.state.on_change()
    return _answer(request, {"bot": name, "disabled": None})


def _switch(key: str, value: bool, what: str) -> Any:
    async def endpoint(request: Request) -> Response:
        user = await run_in_threadpool(require_organiser, request)
        await _body(request)
        db_of(request).set_state(key, value, actor=user.name, what=what)
        request.app.state.on_change()
        return _answer(request, {key: value})

    endpoint.__doc__ = f"``POST``: {what}."
    return endpoint


async def settle(request: Request) -> Response:
    """``POST /api/admin/settle`` ``{"pairs"}``: freeze submissions and play the settle phase."""
    user = await run_in_threadpool(require_organiser, request)
    body = await _body(request)
    db = db_of(request)
    current = db.get_state(SETTLE_STATE)
    if current is not None and current.get("status") in ("requested", "running"):
        raise HTTPError(409, "a settle phase is already under way")
    try:
        pairs = int(body.get("pairs", db.config().settle_pairs))
    except (TypeError, ValueError):
        raise HTTPError(400, "'pairs' must be a whole number") from None
    if not 1 <= pairs <= 100:
        raise HTTPError(400, "'pairs' must be between 1 and 100")
    if len(db.active_versions()) < 2:
        raise HTTPError(409, "a settle phase needs at least two bots in play")
    db.set_state("frozen", True, actor=user.name, what="froze submissions for the settle phase")
    number = (current or {}).get("number", 0) + 1
    db.set_state(SETTLE_STATE, {"status": "requested", "pairs": pairs, "number": number}, actor=user.name,
                 what=f"started settle phase {number} ({pairs} pairs per pairing and side)")
    request.app.state.on_change()
    return _answer(request, {"settle": settle_json(db)})


def api_state(request: Request) -> Response:
    """``GET /api/admin/state``: organiser only."""
    require_organiser(request)
    return JSONResponse(state_json(request))


def admin_page(request: Request) -> Response:
    """The organiser's page: the switches, every bot with a disable form, the event log."""
    require_organiser(request)
    return page(request, "admin.html.j2", state=state_json(request), bots=db_of(request).bots())


ACTIONS = [
    ("/bots/{bot}/disable", disable),
    ("/bots/{bot}/enable", enable),
    ("/pause", _switch("paused", True, "paused the ladder")),
    ("/resume", _switch("paused", False, "resumed the ladder")),
    ("/freeze", _switch("frozen", True, "froze submissions")),
    ("/unfreeze", _switch("frozen", False, "unfroze submissions")),
    ("/settle", settle),
]

# Each action twice: under /api/admin for JSON clients, under /admin for the admin page's forms.
ROUTES = [
    Route("/api/admin/state", api_state, methods=["GET"]),
    Route("/admin", admin_page, methods=["GET"]),
    *(Route(f"{prefix}/admin{path}", endpoint, methods=["POST"]) for prefix in ("/api", "") for path, endpoint in ACTIONS),
]
