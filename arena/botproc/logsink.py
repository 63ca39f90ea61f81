"""Bots' stdout and stderr, copied by the arena into capped log files.

A bot writes into pipes; one thread per arena process (the sink) copies them into the
launch's ``stdout.log`` and ``stderr.log``. So the bot never sees the harness's disk: a full
log volume (ENOSPC) is the arena's failure, recorded on the stream (``LogStream.error``), and
the pipe is drained on as before, so the bot's play never notices; the log is lost and the
match stands (a void would let a bot that fills the volume cancel the match it is losing:
``bots/hostile/voidloss``). Only a copier that stopped reading a pipe by a failure of its own
(``LogStream.cut``: the bot's next writes fail) makes the match a ``harness`` fault.

Logs that share the output folder's file system (no volume of their own mounted on the log
folder) also leave free there what the runner needs for the results (``reserve_for_results``:
it writes its need before each pair) and ``HEADROOM_BYTES`` more, ``KEEP_FREE_BYTES`` at least:
below it a stream drops the rest of its log as it does on ENOSPC. So no bot can stop a
tournament by filling the disk under its database (``bots/hostile/voidloss`` writes its 32 MiB
allowance whenever it falls behind).

Logs are capped per bot per tournament, across all its launches and worker processes: a
ledger file per bot under the run folder (``.logs/<bot>.bytes``, updated under ``flock``)
holds what the bot's launches have written; each stream takes its allowance from it in
slices and gives back what it did not use. A bot over its cap gets one closing line in its
log, then its pipe is closed (its next write fails with EPIPE: its own doing).
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import re
import selectors
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

LEDGER_FOLDER = ".logs"
KEEP_FREE_BYTES = 64 << 20  # free space bot logs leave on the output folder's file system, at least
HEADROOM_BYTES = 16 << 20  # and beyond what the runner last said the results need
RESERVE_FILE = "results-reserve.bytes"  # in the ledger folder: the runner's need, in bytes
SLICE_BYTES = 64 << 10
_READ_BYTES = 64 << 10
_WIDTH = 20  # the ledger's number is written at a fixed width: an update never grows the file
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


class LogBudget:
    """One bot's log allowance for the whole tournament, shared through a ledger file."""

    def __init__(self, run_dir: Path, bot: str, cap_bytes: int) -> None:
        self.cap = cap_bytes
        self.path = Path(run_dir) / LEDGER_FOLDER / f"{_SLUG.sub('_', bot)[:60] or 'bot'}.bytes"
        self.shares_results_disk = _same_file_system(Path(run_dir), Path(run_dir).parent)  # the output folder's

    def keep_free(self) -> int:
        """The free space the bot's logs leave: on the output folder's disk, the runner's need for
        the results plus HEADROOM_BYTES, KEEP_FREE_BYTES at least; none on a volume of their own."""
        if not self.shares_results_disk:
            return 0
        try:
            need = int((self.path.parent / RESERVE_FILE).read_bytes().strip() or 0)
        except (OSError, ValueError):
            need = 0
        return max(KEEP_FREE_BYTES, need + HEADROOM_BYTES)

    def _update(self, change: int) -> int:
        """Add ``change`` (clamped to the cap) to the ledger; the change actually made."""
        self.path.parent.mkdir(exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = os.pread(fd, _WIDTH, 0).strip()
            used = int(raw) if raw else 0
            new = min(self.cap, max(0, used + change))
            os.pwrite(fd, str(new).rjust(_WIDTH).encode(), 0)
            return new - used
        finally:
            os.close(fd)

    def take(self, wanted: int) -> int:
        """Reserve up to ``wanted`` bytes; how many were granted (0 once the cap is reached)."""
        return self._update(wanted)

    def give_back(self, unused: int) -> None:
        """Return a reservation's unused bytes."""
        if unused > 0:
            self._update(-unused)

    def used(self) -> int:
        """Bytes reserved so far by every launch of the bot."""
        try:
            return int(self.path.read_bytes().strip() or 0)
        except (OSError, ValueError):
            return 0


class LogStream:
    """One pipe of one launch and the log file it is copied to."""

    def __init__(self, read_fd: int, path: Path, budget: LogBudget) -> None:
        self.read_fd = read_fd
        self.path = path
        self.budget = budget
        self.error: str | None = None  # why the copy is lost (the arena's disk, or its copier)
        self.cut = False  # the copier failed and closed the pipe: the bot's writes fail from then on
        self.capped = False
        self.closed = False
        self._allowance = 0
        self._lock = threading.Lock()
        os.set_blocking(read_fd, False)
        self._file = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC, 0o600)

    def drain(self) -> bool:
        """Copy what the pipe holds now; False once it reached end-of-file (or was closed)."""
        with self._lock:
            while not self.closed:
                try:
                    data = os.read(self.read_fd, _READ_BYTES)
                except BlockingIOError:
                    return True
                except OSError:
                    data = b""
                if not data:
                    self._close()
                    return False
                self._write(data)
            return False

    def _write(self, data: bytes) -> None:
        if len(data) > self._allowance and self.error is None:
            try:
                self._allowance += self.budget.take(max(SLICE_BYTES, len(data) - self._allowance))
            except OSError as exc:
                self._fail(exc)
        kept = data[: self._allowance]
        self._allowance -= len(kept)
        if kept and self.error is None and self.budget.shares_results_disk:
            free, keep = _free_bytes(self._file), self.budget.keep_free()
            if free - len(kept) < keep:
                self._drop(f"bot log {self.path} dropped at {free / (1 << 20):.0f} MiB free: it shares the output "
                           f"folder's disk, where bot logs leave {keep >> 20} MiB for the results")
        if self.error is None:
            try:
                rest = kept
                while rest:
                    rest = rest[os.write(self._file, rest):]
            except OSError as exc:
                self._fail(exc)
        if len(data) > len(kept) and self.error is None:
            self.capped = True
            note = (f"\n[arena] log cap of {self.budget.cap / (1 << 20):g} MiB per bot per tournament reached: "
                    "this stream is closed\n").encode()
            try:
                os.write(self._file, note)
            except OSError:
                pass
            self._close()

    def _fail(self, exc: OSError) -> None:
        """The arena's side failed (its disk): keep draining so the bot never notices; the log
        is lost, the bot's play untouched."""
        self._drop(f"cannot write bot log {self.path}: {os.strerror(exc.errno or errno.EIO)}")

    def _drop(self, reason: str) -> None:
        """Drop the rest of the log for ``reason``, draining the pipe on."""
        self.error = reason
        self._allowance = 1 << 62
        log.error("%s (the rest of this log is dropped; the bot's matches stand)", reason)

    def _close(self) -> None:
        if self.closed:
            return
        self.closed = True
        _sink().forget(self)
        for fd in (self.read_fd, self._file):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.error is None:
            try:
                self.budget.give_back(self._allowance)
            except OSError:
                pass
        self._allowance = 0

    def abandon(self, reason: str) -> None:
        """Stop copying after a failure of the arena's own copier: the pipe is closed, so the bot's
        next write fails (a ``harness`` fault of the match, unlike a full disk)."""
        with self._lock:
            self.error = self.error or reason
            self.cut = True
            self._close()

    def finish(self, timeout: float) -> None:
        """Copy the rest until end-of-file (the bot is dead) or ``timeout``, then close."""
        deadline = time.monotonic() + timeout
        while self.drain() and time.monotonic() < deadline:
            time.sleep(0.001)
        with self._lock:
            self._close()


class _Sink:
    """This process's copying thread: a selector over every open stream."""

    def __init__(self) -> None:
        self.selector = selectors.DefaultSelector()
        self.lock = threading.Lock()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        self.selector.register(self.wake_r, selectors.EVENT_READ, None)
        self.thread = threading.Thread(target=self._run, name="botproc-logsink", daemon=True)
        self.thread.start()

    def add(self, stream: LogStream) -> None:
        with self.lock:
            self.selector.register(stream.read_fd, selectors.EVENT_READ, stream)
        os.write(self.wake_w, b"x")

    def forget(self, stream: LogStream) -> None:
        with self.lock:
            try:
                self.selector.unregister(stream.read_fd)
            except (KeyError, ValueError):
                pass

    def _run(self) -> None:
        while True:
            for key, _ in self.selector.select(timeout=1.0):
                if key.data is None:
                    try:
                        os.read(self.wake_r, 4096)
                    except BlockingIOError:
                        pass
                    continue
                stream: LogStream = key.data
                try:
                    stream.drain()
                except Exception as exc:  # never let one stream stop the copying of all others
                    log.exception("bot log %s: copying failed", stream.path)
                    stream.abandon(f"the arena's log copier failed on {stream.path}: {exc!r}")


_the_sink: _Sink | None = None
_sink_lock = threading.Lock()


def _sink() -> _Sink:
    global _the_sink
    with _sink_lock:
        if _the_sink is None:
            _the_sink = _Sink()
        return _the_sink


def reserve_for_results(run_dir: Path, need: int) -> None:
    """Tell the bots' log streams under ``run_dir`` that the results need ``need`` bytes free on
    the output folder's disk (the runner, before each pair). A disk that cannot take the note
    (full) leaves the streams at ``KEEP_FREE_BYTES``; the run goes on."""
    folder = Path(run_dir) / LEDGER_FOLDER
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / RESERVE_FILE, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.pwrite(fd, str(need).rjust(_WIDTH).encode(), 0)  # fixed width: a reader never sees half a number
        finally:
            os.close(fd)
    except OSError as exc:
        log.info("cannot note the results' need in %s: %s", folder, exc)


def _same_file_system(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are on one file system (False if either cannot be read)."""
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


def _free_bytes(fd: int) -> int:
    """Bytes free for an unprivileged writer on the file system of ``fd`` (unbounded if that
    cannot be read: the write itself then finds out)."""
    try:
        stats = os.fstatvfs(fd)
    except OSError:
        return 1 << 62
    return stats.f_bavail * stats.f_frsize


def open_stream(path: Path, budget: LogBudget) -> tuple[LogStream, int]:
    """A new stream copied to ``path``; returns it and the pipe's write end for the bot
    (the caller closes it once the bot has it)."""
    read_fd, write_fd = os.pipe()
    try:
        stream = LogStream(read_fd, path, budget)
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        raise
    _sink().add(stream)
    return stream, write_fd


def _after_fork_in_child() -> None:
    """A forked child has no copying thread: it makes its own on first use."""
    global _the_sink, _sink_lock
    _the_sink = None
    _sink_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
