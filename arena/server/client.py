"""``arena submit --server URL --token T BOT_DIR``: pack a bot folder and upload it (stdlib only).

Participants need no server extra: the archive is a ``.tar.gz`` made with ``tarfile`` and the
request a hand-built multipart body sent with ``urllib``.
"""

from __future__ import annotations

import json
import secrets
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.botproc import load_manifest
from arena.server.archive import pack
from arena.server.config import ServerError
from arena.validation.folder import IGNORED_DIRS

SKIPPED = frozenset({*IGNORED_DIRS, ".git", ".hg", ".svn", ".venv", ".mypy_cache", ".pytest_cache"})
FINAL = ("accepted", "rejected")


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer: the status and the decoded JSON body."""

    status: int
    body: dict[str, Any]


def _request(url: str, token: str, data: bytes | None = None, content_type: str | None = None) -> Answer:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return Answer(response.status, json.loads(response.read() or b"{}"))
    except urllib.error.HTTPError as exc:
        try:
            body = json.loads(exc.read() or b"{}")
        except ValueError:
            body = {"error": f"HTTP {exc.code} {exc.reason}"}
        return Answer(exc.code, body if isinstance(body, dict) else {"error": str(body)})
    except (urllib.error.URLError, OSError) as exc:
        raise ServerError(f"cannot reach the server at {url}: {getattr(exc, 'reason', exc)}") from None


def upload(server: str, token: str, bot_dir: Path) -> Answer:
    """Pack ``bot_dir`` and ``POST`` it to ``server``'s ``/api/submissions``."""
    manifest = load_manifest(bot_dir)  # a clear local error before anything is sent
    archive = pack(manifest.bot_dir, lambda part: part in SKIPPED)
    boundary = "arena-" + secrets.token_hex(16)
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"archive\"; "
            f"filename=\"{manifest.name}.tar.gz\"\r\nContent-Type: application/gzip\r\n\r\n").encode()
    body += archive + f"\r\n--{boundary}--\r\n".encode()
    return _request(server.rstrip("/") + "/api/submissions", token, body, f"multipart/form-data; boundary={boundary}")


def wait_for_verdict(server: str, token: str, sid: int, timeout_s: float = 600.0, poll_s: float = 1.0) -> Answer:
    """Poll ``GET /api/submissions/{sid}`` until it is accepted or rejected (or ``timeout_s`` passes)."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = _request(f"{server.rstrip('/')}/api/submissions/{sid}", token)
        if answer.status != 200 or answer.body.get("status") in FINAL or time.monotonic() > deadline:
            return answer
        time.sleep(poll_s)
