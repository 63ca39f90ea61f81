"""``arena serve``: the report's pages over HTTP on 127.0.0.1, refreshed while a tournament runs.

Pages are rendered on request by the same ``Site`` as the static report. Before each request
the server looks at the store's version (the finished-pair count and the tournament's
timestamps, at most every ``check_interval`` seconds); when it changed, the data are read
again and the rendered pages are dropped. The pages poll ``status.json`` and reload themselves
when the version they were rendered from is out of date, so a finished pair shows within a
couple of seconds. The server never writes into the folder.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from jinja2 import Environment

from ..errors import StoreError
from ..store import DB_NAME, Store
from .model import load_report_data, store_version
from .site import CONTENT_TYPES, STATIC_FILES, Site, make_environment, static_file

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
WAITING_STATUS = {"version": "none", "pairs_done": 0, "pairs_total": 0, "matches": 0, "finished": False}


class LiveSite:
    """The current ``Site`` of a tournament folder, rebuilt whenever the store changes."""

    def __init__(self, folder: Path, check_interval: float = 0.25) -> None:
        self.folder = Path(folder)
        self.check_interval = check_interval
        self.env: Environment = make_environment()
        self._lock = threading.Lock()
        self._site: Site | None = None
        self._version = "none"
        self._checked = -float("inf")
        self._cache: dict[str, tuple[bytes, str]] = {}

    def refresh(self) -> None:
        """Re-read the store if a pair was stored since the last look (thread-safe)."""
        with self._lock:
            self._refresh()

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._checked < self.check_interval:
            return
        self._checked = now
        db = self.folder / DB_NAME
        if not db.exists():
            return
        try:
            with Store(db, readonly=True) as store:
                version = store_version(store)
                if version == self._version and self._site is not None:
                    return
                if version == "none":
                    return
                data = load_report_data(store)
        except StoreError as exc:  # a database being created right now, or not ours
            log.debug("not (yet) readable: %s", exc)
            return
        self._site = Site(data, live=True, env=self.env)
        self._version = data.version
        self._cache.clear()
        log.info("%s: report data version %s", self.folder, data.version)

    def get(self, path: str) -> tuple[bytes, str] | None:
        """The rendered file at ``path`` (relative to the site root), or None."""
        with self._lock:
            self._refresh()
            site = self._site
            if site is None:
                return self._waiting(path)
            if path == "status.json":
                return site.render(path)
            cached = self._cache.get(path)
            if cached is None:
                rendered = site.render(path)
                if rendered is None:
                    return None
                self._cache[path] = cached = rendered
            return cached

    def _waiting(self, path: str) -> tuple[bytes, str] | None:
        if path == "status.json":
            return json.dumps(WAITING_STATUS).encode(), CONTENT_TYPES[".json"]
        if path.startswith("static/") and path[7:] in STATIC_FILES:
            return static_file(path[7:]), CONTENT_TYPES[Path(path).suffix]
        if path == "index.html":
            html = self.env.get_template("waiting.html.j2").render(folder=str(self.folder))
            return html.encode("utf-8"), CONTENT_TYPES[".html"]
        return None


class _Handler(BaseHTTPRequestHandler):
    server: ReportServer
    server_version = "SixtySixArena"

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._respond(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._respond(body=False)

    def _respond(self, body: bool) -> None:
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        if path == "" or path.endswith("/"):
            path += "index.html"
        rendered = None if ".." in path.split("/") else self.server.site.get(path)
        if rendered is None:
            payload, kind, status = b"not found\n", "text/plain; charset=utf-8", HTTPStatus.NOT_FOUND
        else:
            (payload, kind), status = rendered, HTTPStatus.OK
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        log.debug("%s %s", self.address_string(), format % args)


class ReportServer(ThreadingHTTPServer):
    """A threaded HTTP server bound to 127.0.0.1 that serves one ``LiveSite``."""

    daemon_threads = True

    def __init__(self, folder: Path, port: int = 0) -> None:
        self.site = LiveSite(folder)
        super().__init__((HOST, port), _Handler)

    @property
    def url(self) -> str:
        """The address to open."""
        return f"http://{HOST}:{self.server_address[1]}/"
