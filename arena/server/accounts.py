"""Account routes: ``GET /api/me``, and the web login (the token, then a cookie session) and logout."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from arena.server.auth import CSRF_FIELD, SESSION_COOKIE, check_csrf, check_same_origin, db_of, require_user
from arena.server.web import page


def me(request: Request) -> JSONResponse:
    """The signed-in account: name, role and quotas."""
    user = require_user(request)
    return JSONResponse({"name": user.name, "role": user.role, "quotas": user.quotas.to_dict()})


def login_form(request: Request) -> Response:
    """The login page."""
    return page(request, "login.html.j2")


async def login(request: Request) -> Response:
    """Check the token from the form; on success set the session cookie and go home.

    Only from this site's own page (403 otherwise, see ``check_same_origin``): another site
    could otherwise sign a visitor in to an account of its choosing (login CSRF).
    """
    check_same_origin(request)
    form = await request.form(max_files=0, max_fields=4)
    token = str(form.get("token", "")).strip()
    db = db_of(request)
    user = await run_in_threadpool(db.user_by_token, token) if token else None
    if user is None:
        return await run_in_threadpool(page, request, "login.html.j2", status=401,
                                       error="unknown token: paste the whole token you were given")
    key = await run_in_threadpool(db.new_session, user, db.config().session_hours)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(SESSION_COOKIE, key, max_age=db.config().session_hours * 3600, httponly=True,
                        samesite="lax", secure=request.url.scheme == "https", path="/")
    return response


async def logout(request: Request) -> Response:
    """End the web session."""
    form = await request.form(max_files=0, max_fields=4)
    check_csrf(request, str(form.get(CSRF_FIELD, "")))
    key = request.cookies.get(SESSION_COOKIE)
    if key:
        db_of(request).end_session(key)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


ROUTES = [
    Route("/api/me", me, methods=["GET"]),
    Route("/login", login_form, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
]
