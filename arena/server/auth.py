"""Who is asking: bearer tokens for the API, a cookie session for the web pages, and the role checks."""

from __future__ import annotations

import hashlib
import hmac

from starlette.requests import Request

from arena.server import tokens
from arena.server.db import ServerDB, User

SESSION_COOKIE = "arena_session"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"


class HTTPError(Exception):
    """A request refused with ``status`` and a one-line ``reason`` (JSON ``{"error": reason}``)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def db_of(request: Request) -> ServerDB:
    """The server database of the application serving ``request``."""
    db: ServerDB = request.app.state.db
    return db


def current_user(request: Request) -> User | None:
    """The account behind the request, None for an anonymous viewer.

    A bearer token that is malformed or unknown is refused (401), never taken as anonymous;
    an expired or unknown session cookie is simply anonymous.
    """
    header = request.headers.get("authorization")
    if header is not None:
        token = tokens.bearer(header)
        if token is None:
            raise HTTPError(401, "use the header Authorization: Bearer TOKEN")
        user = db_of(request).user_by_token(token)
        if user is None:
            raise HTTPError(401, "unknown token")
        return user
    key = request.cookies.get(SESSION_COOKIE)
    return db_of(request).user_by_session(key) if key else None


def require_user(request: Request) -> User:
    """The signed-in account; 401 for an anonymous request."""
    user = current_user(request)
    if user is None:
        raise HTTPError(401, "sign in first: send Authorization: Bearer TOKEN (or log in on the web page)")
    return user


def require_organiser(request: Request) -> User:
    """The organiser's account; 401 anonymous, 403 for a participant."""
    user = require_user(request)
    if not user.organiser:
        raise HTTPError(403, "only the organiser may do this")
    return user


def require_owner_or_organiser(user: User | None, owner_id: int, what: str) -> None:
    """401 anonymous; 403 for anyone but ``owner_id`` and the organiser."""
    if user is None:
        raise HTTPError(401, f"sign in to see {what}")
    if not user.organiser and user.id != owner_id:
        raise HTTPError(403, f"only its owner or the organiser may see {what}")


def csrf_token(request: Request) -> str:
    """The anti-forgery value web forms carry for this session ('' without a session)."""
    key = request.cookies.get(SESSION_COOKIE)
    return hashlib.sha256(b"csrf:" + key.encode()).hexdigest() if key else ""


def check_csrf(request: Request, submitted: str | None) -> None:
    """Refuse a cookie-authenticated write whose form field (or header) lacks this session's value.

    Bearer-token requests need none: a browser never adds that header by itself.
    """
    if request.headers.get("authorization") is not None or SESSION_COOKIE not in request.cookies:
        return
    value = submitted if submitted is not None else request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(value.encode(), csrf_token(request).encode()):
        raise HTTPError(403, "the form is stale or forged (missing anti-forgery value): reload the page")


SAME_ORIGIN_FETCH = ("same-origin", "none")  # Sec-Fetch-Site values of a request this site's own page made


def check_same_origin(request: Request) -> None:
    """Refuse (403) a browser request another site made: for writes that set a cookie (the login).

    Refused: an ``Origin`` header (when there is one) other than this server's own origin, or
    a ``Sec-Fetch-Site`` (when there is one) other than same-origin or none. A request with
    neither header (a script, curl) passes: no browser sends a cross-site POST without them.
    """
    origin = request.headers.get("origin")
    own = f"{request.url.scheme}://{request.url.netloc}".lower()
    site = request.headers.get("sec-fetch-site")
    if (origin is not None and origin.strip().lower() != own) or (
            site is not None and site.strip().lower() not in SAME_ORIGIN_FETCH):
        raise HTTPError(403, "refused: this login form was posted from another site; log in on this site's own page")
