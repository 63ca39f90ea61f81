"""The validation queue: each queued submission is run through ``arena validate`` in a subprocess.

A thread takes the oldest queued submission, marks it ``validating`` and runs the existing
compliance suite (sandboxed, as for ``arena validate``) in a child process, so the web server
stays responsive and no ZeroMQ context ever lives in the server process. The verdict and the
whole JSON report are stored; a rejected submission's files are deleted (its report and
validation logs stay for its owner), an accepted one is handed to ``on_accept`` (the ladder).
A submission left ``validating`` by a killed server is queued again on start.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.server.config import ServerConfig
from arena.server.db import ServerDB, Submission

log = logging.getLogger(__name__)

VALIDATION_LOGS = "validation"
TIMEOUT_FLOOR_S = 120.0


def remove_tree(path: Path) -> None:
    """Delete ``path``; what cannot be deleted (an error, a tree too deep for ``shutil.rmtree``)
    is logged and left, never raised."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except Exception as exc:  # RecursionError is not one of the errors ignore_errors ignores
        log.warning("could not remove %s (%s: %s): it is left on disk", path, type(exc).__name__, exc,
                    exc_info=True)
        return
    if os.path.lexists(path):
        log.warning("could not remove %s: some of it is left on disk", path)


def validation_command(bot_dir: Path, logs: Path, config: ServerConfig) -> list[str]:
    """The ``arena validate`` command line for one submission."""
    return [sys.executable, "-m", "arena.cli", "validate", str(bot_dir), "--json",
            "--time-limit-ms", str(config.time_limit_ms), "--bank-ms", str(config.bank_ms),
            "--handshake-ms", str(config.handshake_ms), "--sandbox", config.sandbox, "--run-dir", str(logs)]


def _verdict(done: subprocess.CompletedProcess[str]) -> tuple[bool, dict[str, Any] | None, str | None]:
    """(accepted, report, reason) from the validate command's exit status and JSON."""
    try:
        report = json.loads(done.stdout)
    except ValueError:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return False, None, f"the validation could not run: {last}"
    if not isinstance(report, dict):
        return False, None, "the validation printed no report"
    if done.returncode == 0 and report.get("passed") is True:
        return True, report, None
    failed = next((s for s in report.get("steps", []) if s.get("status") == "fail"), None)
    if failed is None:
        return False, report, "did not pass validation"
    detail = (failed.get("detail") or "").splitlines()
    return False, report, f"failed step {failed['name']!r}: {detail[0] if detail else failed.get('title', '')}"


class ValidationQueue(threading.Thread):
    """The thread that validates queued submissions one at a time."""

    def __init__(self, folder: Path, on_accept: Callable[[Submission], None] | None = None) -> None:
        super().__init__(name="validation-queue", daemon=True)
        self.folder = Path(folder)
        self.on_accept = on_accept
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self._child: subprocess.Popen[str] | None = None

    def stop(self) -> None:
        """Ask the thread to end after the validation under way."""
        self.stopping.set()
        self.wake.set()
        child = self._child
        if child is not None and child.poll() is None:
            child.kill()  # its submission is validated again on the next start

    def run(self) -> None:
        db = ServerDB(self.folder)
        requeued = db.requeue_interrupted()
        if requeued:
            log.warning("%d submission(s) were being validated when the server stopped: queued again", requeued)
        while not self.stopping.is_set():
            submission = db.claim_queued()
            if submission is None:
                self.wake.wait(1.0)
                self.wake.clear()
                continue
            try:
                self.validate(db, submission)
            except Exception:  # the queue must outlive one broken validation
                log.exception("validating submission %d failed in the harness", submission.id)
                db.finish_submission(submission.id, False, None, "the server failed while validating it; "
                                     "submit it again")
        db.close()

    def validate(self, db: ServerDB, submission: Submission) -> None:
        """Validate one submission and store the verdict."""
        config = db.config()
        bot_dir = self.folder / submission.bot_path
        logs = self.folder / "submissions" / str(submission.id) / VALIDATION_LOGS
        logs.mkdir(parents=True, exist_ok=True)
        timeout = max(TIMEOUT_FLOOR_S, 40 * (config.time_limit_ms + config.handshake_ms) / 1000.0)
        log.info("validating submission %d (%s v%d)", submission.id, submission.bot, submission.version)
        child = self._child = subprocess.Popen(validation_command(bot_dir, logs, config), stdout=subprocess.PIPE,
                                               stderr=subprocess.PIPE, text=True)
        try:
            out, err = child.communicate(timeout=timeout)
            accepted, report, reason = _verdict(subprocess.CompletedProcess(child.args, child.returncode, out, err))
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            accepted, report, reason = False, None, f"the validation took longer than {timeout:.0f} s"
        finally:
            self._child = None
        if self.stopping.is_set():
            return  # stopped mid-way: left 'validating', so it is queued again on the next start
        if report is not None:
            report["bot_dir"] = f"{submission.bot} v{submission.version}"  # not the server's own path
        if not accepted:
            remove_tree(bot_dir)
        db.finish_submission(submission.id, accepted, report, reason)
        log.info("submission %d %s%s", submission.id, "accepted" if accepted else "rejected",
                 f": {reason}" if reason else "")
        if accepted and self.on_accept is not None:
            found = db.submission(submission.id)
            assert found is not None
            self.on_accept(found)
