"""One real tournament for every report test, watched live by ``arena serve`` while it runs.

The session fixture starts ``arena serve`` on an empty output folder, then ``arena run`` for a
small round-robin of real bot processes into that folder (one entrant is labelled
``<script>alert(1)</script>``, one is a faulty bot). While the tournament runs it polls the
server and the database, and records what each showed and when. The serve test checks that
record; the page and browser tests use the finished folder.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-m", "arena.cli"]
XSS_LABEL = "<script>alert(1)</script>"
BOTS = [("bots/random", XSS_LABEL), ("bots/random", "random"), ("bench/bots/echo", "echo"),
        ("bots/faulty/illegal", "illegal")]


@dataclass
class LiveRun:
    """The finished tournament folder and what ``arena serve`` showed while it ran."""

    out: Path
    url: str
    waiting_page: str
    db_seen: list[tuple[float, int]] = field(default_factory=list)  # (time, finished pairs in the DB)
    served: list[tuple[float, dict]] = field(default_factory=list)  # (time, status.json)
    pages: dict[int, str] = field(default_factory=dict)  # index.html by the finished-pair count it shows
    final: dict[str, str] = field(default_factory=dict)  # pages fetched after the run
    not_found: int = 0
    serve_exit: int | None = None


def write_tournament(folder: Path, out: Path, pairs: int = 1, seed: int = 11) -> Path:
    lines = ['name = "report-cup"', f"seed = {seed}", f"pairs_per_pairing = {pairs}", "concurrency = 1",
             f'output = "{out}"', "allow_unvalidated = true",
             'deals = "public"']  # the page checks rely on this seed's known deals
    for path, label in BOTS:
        lines += ["[[bots]]", f'path = "{ROOT / path}"', f"name = {json.dumps(label)}"]
    toml = folder / "tournament.toml"
    toml.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return toml


def fetch(url: str, timeout: float = 5.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (our own 127.0.0.1 server)
        return response.read().decode("utf-8")


def finished_pairs(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            return con.execute("SELECT count(*) FROM pairs WHERE finished_at IS NOT NULL").fetchone()[0]
    except sqlite3.Error:  # being created by the runner right now
        return 0


def read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise AssertionError(f"no output from {proc.args} within {timeout} s")
    return proc.stdout.readline()


def stop(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> int:
    """Signal a process we started (in its own session) and wait for it; SIGKILL its group if it hangs."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig) if sig == signal.SIGKILL else proc.send_signal(sig)
            return proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    return proc.returncode


@pytest.fixture(scope="session")
def live_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveRun]:
    folder = tmp_path_factory.mktemp("report-tournament")
    out = folder / "out"
    out.mkdir()
    serve = subprocess.Popen([*ARENA, "serve", str(out), "--port", "0"], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    run = None
    try:
        line = read_line(serve, 20)
        assert line.startswith("serving ") and "http://127.0.0.1:" in line, line
        url = line.split(" at ", 1)[1].split()[0]
        live = LiveRun(out=out, url=url, waiting_page=fetch(url))
        run = subprocess.Popen([*ARENA, "run", str(write_tournament(folder, out)), "--quiet"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
        deadline = time.monotonic() + 90
        status: dict = {}
        while time.monotonic() < deadline:
            done = run.poll() is not None
            if done and run.returncode != 0:
                break
            live.db_seen.append((time.monotonic(), finished_pairs(out / "arena.sqlite")))
            status = json.loads(fetch(url + "status.json"))
            live.served.append((time.monotonic(), status))
            if status["pairs_total"] and status["pairs_done"] not in live.pages:
                index = fetch(url + "index.html")  # may already be newer than the status just read
                shown = re.search(r'data-pairs-done="(\d+)"', index)
                if shown:
                    live.pages.setdefault(int(shown[1]), index)
            if done and status["finished"]:
                break
            time.sleep(0.1)  # polling the server, as a browser page does, with the deadline above
        assert run.poll() is not None, "the tournament did not finish within 90 s"
        assert run.returncode == 0, run.stderr.read() if run.stderr else ""
        assert status.get("finished"), f"the server never showed the finished tournament: {status}"
        for page in ("index.html", "crosstable.html", "matches.html", "bots/0.html", "matches/p00000h0.html"):
            live.final[page] = fetch(url + page)
        try:
            fetch(url + "matches/nonexistent.html")
        except urllib.error.HTTPError as exc:
            live.not_found = exc.code
        live.serve_exit = stop(serve)
        yield live
    finally:
        for proc in (run, serve):
            if proc is not None:
                stop(proc, signal.SIGKILL)
                for stream in (proc.stdout, proc.stderr):
                    if stream is not None:
                        stream.close()


@pytest.fixture(scope="session")
def site_dir(live_run: LiveRun, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The static report of the finished tournament, written by ``arena report DIR -o OUT``."""
    from arena.cli import main

    target = tmp_path_factory.mktemp("report") / "report"
    assert main(["report", str(live_run.out), "-o", str(target)]) == 0
    return target
