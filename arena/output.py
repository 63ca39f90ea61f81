"""A tournament's output folder: what may be in it, who is using it, and how much room is left.

One run at a time uses a folder: ``hold_output`` takes an exclusive ``flock`` on
``OUT/arena.lock`` and writes its PID there. The kernel drops the lock when the process dies,
even by ``kill -9``, so a stale lock file never blocks the next run; a second run on the same
folder is refused at once with the PID of the one holding it.

The results database is the storage side's: callers name its file (``results.store.DB_NAME``)
and tell how many bytes it holds, so this module knows nothing of how results are stored.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena.tournament import ConfigError

LOG_NAME = "arena.log"
BOT_LOGS = "bots"  # the bots' logs (may be a volume of its own, mounted there beforehand)
LOCK_NAME = "arena.lock"
# What a run leaves in a folder besides its database (and the database's own files, named after it).
_OWN_FILES = frozenset({LOG_NAME, LOCK_NAME, BOT_LOGS})
MIB = 1 << 20
MIN_FREE_BYTES = 16 * MIB  # room kept free for the database's growth, bot logs and the WAL

_held: dict[Path, tuple[int, int]] = {}  # folder -> (lock fd, depth) held by this process


class FolderInUse(ConfigError):
    """Another arena process is running a tournament in this output folder."""

    code = "in_use"


def check_output_folder(out: Path, database: str) -> None:
    """Refuse an output folder that is a file or a foreign non-empty folder; create it if missing.

    A folder is the arena's if it holds the results ``database`` (a file name), or only what a
    run leaves before it exists: the log, the lock, the bot logs, files named after the
    database (it is built aside).
    """
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: the output folder is a file")
    foreign = [p for p in out.iterdir() if p.name not in _OWN_FILES and not p.name.startswith(database)
               ] if out.is_dir() else []
    if foreign and not (out / database).exists():
        raise ConfigError(f"{out}: exists and is not an arena output folder (no {database}); use a new folder")
    out.mkdir(parents=True, exist_ok=True)


@contextmanager
def hold_output(out: Path, database: str) -> Iterator[None]:
    """Check and create ``out`` (``check_output_folder``), then hold its lock until the block ends
    (re-entrant in one process)."""
    key = Path(out).absolute()
    if key in _held:
        fd, depth = _held[key]
        _held[key] = (fd, depth + 1)
        try:
            yield
        finally:
            _release(key)
        return
    check_output_folder(key, database)
    fd = os.open(key / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        if exc.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        raise FolderInUse(f"{key}: in use by arena process {holder} (it holds {key / LOCK_NAME}); "
                          f"wait for it to end or stop it, or use another output folder") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _held[key] = (fd, 1)
    try:
        yield
    finally:
        _release(key)


def _release(key: Path) -> None:
    fd, depth = _held[key]
    if depth > 1:
        _held[key] = (fd, depth - 1)
        return
    del _held[key]
    os.close(fd)  # closing the last descriptor drops the lock; the file stays (unlinking it would race)


def forget_held_locks() -> None:
    """In a forked child: close the inherited lock descriptors, so only the parent holds the lock."""
    for fd, _depth in _held.values():
        os.close(fd)
    _held.clear()


def space_needed(stored_bytes: int, pairs_stored: int, pairs_at_once: int) -> int:
    """Bytes that should be free in the output folder before another pair starts.

    ``MIN_FREE_BYTES``, plus room for the pairs that can be in flight at once, each as large
    as the average stored pair so far (``stored_bytes``, what the results take on disk, over
    the pairs stored).
    """
    per_pair = stored_bytes // pairs_stored if pairs_stored else 0
    return MIN_FREE_BYTES + 2 * pairs_at_once * per_pair


def free_space(out: Path) -> int:
    """Bytes free for an unprivileged writer on ``out``'s file system."""
    return shutil.disk_usage(out).free
