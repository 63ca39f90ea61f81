"""Uploads: ``POST /api/submissions`` (and the web form), each a new version of the uploader's bot.

An upload is checked in this order, and the first refusal answers ``{"error": reason}``:
signed in (401), submissions not frozen (403), the daily quota (429), one ``archive`` file
field within the archive quota (400/413), a safe archive within the unpacked and file quotas
(400, see ``arena.server.archive``), a readable bot.toml whose name may name a bot (400), a
bot name that is not another participant's (403). Then it is queued for validation: 201.
"""

from __future__ import annotations

import logging
import secrets
import shutil
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from arena.botproc import load_manifest
from arena.errors import ArenaError
from arena.server.archive import ArchiveError, ArchiveLimits, unpack
from arena.server.auth import (
    CSRF_FIELD, HTTPError, check_csrf, current_user, db_of, require_owner_or_organiser, require_user,
)
from arena.server.db import OwnershipError, QuotaError, ServerDB, Submission, User, now, quota_reason
from arena.server.setup import check_name
from arena.server.validator import remove_tree
from arena.server.web import page

SUBMISSIONS = "submissions"
INCOMING = "incoming"  # where uploads are unpacked before they are queued

log = logging.getLogger(__name__)


def clear_incoming(folder: Path) -> None:
    """Remove what a killed server left half unpacked (call before serving).

    Never fails: a leftover that cannot be removed (whatever the error, e.g. a tree too
    deep for ``shutil.rmtree``'s recursion) is logged and left, and the server starts.
    """
    try:
        leftovers = list((Path(folder) / INCOMING).glob("*"))
    except Exception:
        log.exception("cannot list %s; leaving it as it is", Path(folder) / INCOMING)
        return
    for leftover in leftovers:
        remove_tree(leftover)


def submission_json(sub: Submission) -> dict[str, Any]:
    """The API form of a submission (its report only for those allowed to see it)."""
    return {"id": sub.id, "bot": sub.bot, "owner": sub.owner, "version": sub.version, "status": sub.status,
            "created_at": sub.created_at, "finished_at": sub.finished_at, "reason": sub.reason,
            "report": sub.report or {}}


def _refusal(db: ServerDB, user: User) -> HTTPError | None:
    """Why ``user`` may not upload now, if so (the quota is checked again when the upload is stored)."""
    if db.get_state("frozen", False):
        return HTTPError(403, "submissions are frozen by the organiser")
    quota = user.quotas.submissions_per_day
    if db.submissions_since(user, now() - timedelta(days=1)) >= quota:
        return HTTPError(429, quota_reason(quota))
    return None


def store_upload(db: ServerDB, user: User, upload: UploadFile) -> Submission:
    """Unpack ``upload`` safely and queue it as a new version of its bot (blocking: run in a thread)."""
    size = upload.size if upload.size is not None else 0
    if size > user.quotas.archive_bytes:
        raise HTTPError(413, f"archive over the quota of {user.quotas.archive_bytes} bytes ({size} bytes)")
    return queue_archive(db, user, upload.file)


def queue_archive(db: ServerDB, user: User, data: IO[bytes]) -> Submission:
    """Unpack the archive ``data`` within ``user``'s quotas and queue it; HTTPError says why not."""
    config = db.config()
    limits = ArchiveLimits(user.quotas.archive_bytes, user.quotas.unpacked_bytes, user.quotas.files,
                           config.max_zip_ratio)
    staging = db.folder / INCOMING / secrets.token_hex(8)
    try:
        bot_dir = unpack(data, staging, limits)
        try:
            manifest = load_manifest(bot_dir)
        except ArenaError as exc:
            shown = str(exc).replace(str(bot_dir) + "/", "").replace(str(bot_dir), "the archive")
            raise HTTPError(400, shown) from None
        try:
            check_name(manifest.name, "bot name")
        except ArenaError as exc:
            raise HTTPError(400, f"bot.toml: {exc}") from None
        inner = bot_dir.relative_to(staging)

        def place(sid: int) -> str:
            final = db.folder / SUBMISSIONS / str(sid) / "files"
            final.parent.mkdir(parents=True, exist_ok=True)
            staging.rename(final)
            return str((final / inner).relative_to(db.folder))

        try:
            return db.add_submission(user, manifest.name, data.seek(0, 2), place)
        except OwnershipError as exc:
            raise HTTPError(403, str(exc)) from None
        except QuotaError as exc:  # concurrent uploads that all passed the early check
            raise HTTPError(429, str(exc)) from None
    except ArchiveError as exc:
        raise HTTPError(400, f"archive refused: {exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _uploader(request: Request) -> User:
    """The signed-in uploader, if they may upload now (blocking: a token costs scrypt; run in a thread)."""
    user = require_user(request)
    refusal = _refusal(db_of(request), user)
    if refusal is not None:
        raise refusal
    return user


async def _upload(request: Request, *, web: bool) -> tuple[User, Submission]:
    user = await run_in_threadpool(_uploader, request)
    db = db_of(request)
    form = await request.form(max_files=1, max_fields=2)
    check_csrf(request, str(form[CSRF_FIELD]) if web and CSRF_FIELD in form else None)
    upload = form.get("archive")
    if not isinstance(upload, UploadFile):
        raise HTTPError(400, "send the bot as a multipart file field named 'archive' (.tar.gz or .zip)")
    submission = await run_in_threadpool(store_upload, db, user, upload)
    request.app.state.on_submission()
    return user, submission


async def api_submit(request: Request) -> Response:
    """``POST /api/submissions``: 201 ``{"id", "bot", "version", "status": "queued"}``."""
    _, sub = await _upload(request, web=False)
    return JSONResponse({"id": sub.id, "bot": sub.bot, "version": sub.version, "status": sub.status},
                        status_code=201)


def _visible_submission(request: Request) -> Submission:
    try:
        sid = int(request.path_params["sid"])
    except ValueError:
        raise HTTPError(404, "no such submission") from None
    sub = db_of(request).submission(sid)
    user = current_user(request)
    if sub is None:
        raise HTTPError(404, "no such submission")
    require_owner_or_organiser(user, sub.owner_id, "this submission")
    return sub


def api_submission(request: Request) -> Response:
    """``GET /api/submissions/{id}``: its status and whole validation report (owner or organiser)."""
    return JSONResponse(submission_json(_visible_submission(request)))


def api_submissions(request: Request) -> Response:
    """``GET /api/submissions``: the caller's submissions (the organiser's: everyone's), newest first."""
    user = require_user(request)
    subs = db_of(request).submissions(None if user.organiser else user.id)
    return JSONResponse({"submissions": [{k: v for k, v in submission_json(s).items() if k != "report"}
                                         for s in subs]})


def submit_form(request: Request) -> Response:
    """The upload page."""
    user = require_user(request)
    refusal = _refusal(db_of(request), user)
    return page(request, "submit.html.j2", refusal=refusal.reason if refusal else None)


async def web_submit(request: Request) -> Response:
    """The upload form's target: on to the new submission's status page."""
    _, sub = await _upload(request, web=True)
    return RedirectResponse(f"/submissions/{sub.id}", status_code=303)


def submissions_page(request: Request) -> Response:
    """The signed-in participant's submissions with their status."""
    user = require_user(request)
    return page(request, "submissions.html.j2", submissions=db_of(request).submissions(
        None if user.organiser else user.id))


def submission_page(request: Request) -> Response:
    """One submission's status and whole validation report."""
    sub = _visible_submission(request)
    return page(request, "submission.html.j2", sub=sub, report=sub.report or {})


ROUTES = [
    Route("/api/submissions", api_submit, methods=["POST"]),
    Route("/api/submissions", api_submissions, methods=["GET"]),
    Route("/api/submissions/{sid}", api_submission, methods=["GET"]),
    Route("/submit", submit_form, methods=["GET"]),
    Route("/submit", web_submit, methods=["POST"]),
    Route("/submissions", submissions_page, methods=["GET"]),
    Route("/submissions/{sid}", submission_page, methods=["GET"]),
]
