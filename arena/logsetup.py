"""Logging for long runs: the console above the progress bar, the run's log file, and worker records forwarded.

Called once, from the CLI, before the worker pool exists (multiprocessing-logging only forwards the
records of workers forked after it wrapped the handlers): the start method is pinned to fork, a console handler (above the progress bar) and the file handler are
installed, then multiprocessing-logging wraps them so forked workers' records reach them.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import sys
from pathlib import Path

import multiprocessing_logging

from arena import progress

FORMAT = "%(asctime)s %(levelname)s %(processName)s %(name)s: %(message)s"
_installed = False
_forwarding = False


class ConsoleHandler(logging.Handler):
    """Writes records above the progress bar instead of through it."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            progress.write(self.format(record))
        except Exception:
            self.handleError(record)


class RunLogHandler(logging.FileHandler):
    """The run's log file. A record it cannot write (the disk full: the run is stopping for it,
    and the console says so) is dropped with one line on stderr, not a traceback per record."""

    failed = False

    def handleError(self, record: logging.LogRecord) -> None:
        if not self.failed:
            self.failed = True
            error = sys.exc_info()[1]
            print(f"warning: cannot write the log {self.baseFilename} ({error}); its records are dropped "
                  "while that lasts", file=sys.stderr)


def setup_logging(log_file: Path | None, verbose: bool = False) -> None:
    """Install the console and file handlers (once per process) and forward worker records."""
    global _installed, _forwarding
    if not _installed:
        if multiprocessing.get_start_method(allow_none=True) is None:
            multiprocessing.set_start_method("fork")
        root = logging.getLogger()
        root.setLevel(logging.INFO)
        console = ConsoleHandler()
        console.setLevel(logging.INFO if verbose else logging.WARNING)
        console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(console)
        if log_file is not None:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            file_handler = RunLogHandler(log_file, encoding="utf-8")
            file_handler.setFormatter(logging.Formatter(FORMAT))
            root.addHandler(file_handler)
        _installed = True
    if not _forwarding:
        multiprocessing_logging.install_mp_handler()
        _forwarding = True


def renew_forwarding() -> None:
    """Give the workers made from now on a fresh log queue (after a worker was killed).

    A worker killed while handing a record over can hold the shared queue's lock forever, and
    every process writing to that queue would then block, at the latest when it exits. The old
    queues are abandoned: never joined at exit, their receivers left to drain and stop.
    """
    if not _forwarding:
        return
    for handler in _unwrap():
        handler.queue.cancel_join_thread()
    multiprocessing_logging.install_mp_handler(logging.getLogger())


def stop_forwarding() -> None:
    """The run's workers are gone: this process's records go straight to the handlers again.

    Each forwarding thread stops by itself once it has handed on what the workers sent, and
    is waited for at exit, by which time it has long ended. (Closing the forwarding handler
    at exit instead waits for the thread's next 0.2 s poll of its queue: 100 ms on average.)
    ``setup_logging`` forwards again.
    """
    global _forwarding
    if not _forwarding:
        return
    for handler in _unwrap():
        atexit.register(handler._receive_thread.join, 5.0)
    _forwarding = False


def _unwrap() -> list[multiprocessing_logging.MultiProcessingHandler]:
    """Put the root logger's own handlers back; the forwarding handlers, each marked closed (its
    thread stops once its queue is empty, and its ``close`` does nothing)."""
    root = logging.getLogger()
    wrapped = [h for h in root.handlers if isinstance(h, multiprocessing_logging.MultiProcessingHandler)]
    multiprocessing_logging.uninstall_mp_handler(root)  # first: no record may reach a stopping thread
    for handler in wrapped:
        handler._is_closed = True
    return wrapped
