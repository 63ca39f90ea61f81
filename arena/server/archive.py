"""Safe unpacking of an uploaded bot archive (``.tar.gz`` or ``.zip``).

Everything is checked before or while it is written, never after: the archive's size, the
number of entries, each entry's name (no absolute path, no ``..``, no name seen twice), its
type (files, folders and links only: no device, FIFO or socket), links (a symlink's target
and a hard link's source must stay inside the folder, and nothing is written through a
link), and sizes (the declared total, and for zip each member's compression ratio, against
the quotas; bytes are counted again as they are written). Files are created with
``O_NOFOLLOW | O_EXCL`` and no mode bits but the owner's read/write and everyone's execute.
The first problem raises ``ArchiveError`` with a reason a participant can act on.
"""

from __future__ import annotations

import io
import os
import posixpath
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from arena.server.config import ServerError

MANIFEST = "bot.toml"
_CHUNK = 64 * 1024
_MAX_LINK_TARGET = 1024


class ArchiveError(ServerError):
    """An upload that is refused; the message is the reason shown to the participant."""

    code = "archive"


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """What one unpacked archive may hold."""

    archive_bytes: int
    unpacked_bytes: int
    files: int
    max_ratio: int


def _clean_name(raw: str) -> str:
    """The entry's path inside the folder ('' for the root); ArchiveError for an escaping one."""
    if "\0" in raw or "\\" in raw:
        raise ArchiveError(f"entry {raw!r}: names may not hold NUL or backslash characters")
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise ArchiveError(f"entry {raw!r}: absolute paths are not allowed")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"entry {raw!r}: '..' in a path is not allowed")
    return "/".join(parts)


def _link_inside(name: str, target: str) -> bool:
    """Whether a symlink at ``name`` to ``target`` stays inside the folder (lexically)."""
    if not target or target.startswith("/") or "\0" in target:
        return False
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    return resolved != ".." and not resolved.startswith("../")


class _Writer:
    """Writes entries under ``root`` and keeps the counts the limits bound."""

    def __init__(self, root: Path, limits: ArchiveLimits) -> None:
        self.root = root
        self.limits = limits
        self.entries = 0
        self.written = 0
        self.seen: set[str] = set()
        self.files: set[str] = set()
        self.links: set[str] = set()

    def admit(self, name: str) -> None:
        """Count an entry; refuse a second entry of the same name and one beyond the file quota."""
        self.entries += 1
        if self.entries > self.limits.files:
            raise ArchiveError(f"too many files: at most {self.limits.files} entries are allowed")
        if name in self.seen:
            raise ArchiveError(f"entry {name!r} appears twice in the archive")
        self.seen.add(name)

    def _parent(self, name: str) -> Path:
        """Make the entry's parent folders; refuse writing through a link."""
        parts = name.split("/")[:-1]
        here = self.root
        for index, part in enumerate(parts):
            if "/".join(parts[: index + 1]) in self.links or (here / part).is_symlink():
                raise ArchiveError(f"entry {name!r}: writing through the link {'/'.join(parts[: index + 1])!r} "
                                   "is not allowed")
            here = here / part
            if not here.exists():
                here.mkdir(mode=0o755)
            elif not here.is_dir():
                raise ArchiveError(f"entry {name!r}: {'/'.join(parts[: index + 1])!r} is a file, not a folder")
        return here

    def folder(self, name: str) -> None:
        """A folder entry."""
        if name:
            (self._parent(name) / name.rsplit("/", 1)[-1]).mkdir(mode=0o755, exist_ok=True)

    def file(self, name: str, source: IO[bytes], executable: bool) -> None:
        """A regular file, its bytes counted against the unpacked quota as they are written."""
        if not name:
            raise ArchiveError("an archive entry without a name is not allowed")
        path = self._parent(name) / name.rsplit("/", 1)[-1]
        mode = 0o755 if executable else 0o644
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        except FileExistsError:
            raise ArchiveError(f"entry {name!r} appears twice in the archive") from None
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(_CHUNK):
                self.written += len(chunk)
                if self.written > self.limits.unpacked_bytes:
                    raise ArchiveError(f"unpacked size over the quota of {self.limits.unpacked_bytes} bytes")
                out.write(chunk)
        self.files.add(name)

    def symlink(self, name: str, target: str) -> None:
        """A symlink whose target stays inside the folder."""
        if not _link_inside(name, target):
            raise ArchiveError(f"entry {name!r}: a symlink to {target!r} leads outside the bot folder")
        os.symlink(target, self._parent(name) / name.rsplit("/", 1)[-1])
        self.links.add(name)

    def hardlink(self, name: str, source_raw: str) -> None:
        """A hard link to a file already unpacked (stored as a copy of it)."""
        try:
            source = _clean_name(source_raw)
        except ArchiveError:
            source = ""
        if source not in self.files:
            raise ArchiveError(f"entry {name!r}: a hard link to {source_raw!r} leads outside the bot folder")
        with open(self.root / source, "rb") as fh:
            self.file(name, fh, os.access(self.root / source, os.X_OK))


def _declared(total: int, limits: ArchiveLimits, packed: int) -> None:
    if total > limits.unpacked_bytes:
        raise ArchiveError(f"unpacked size over the quota of {limits.unpacked_bytes} bytes")
    if packed and total > limits.max_ratio * max(packed, 4096):
        raise ArchiveError(f"compression ratio over {limits.max_ratio}:1 (a zip bomb?): {total} bytes from {packed}")


def _untar(data: IO[bytes], size: int, writer: _Writer) -> None:
    total = 0
    try:
        with tarfile.open(fileobj=data, mode="r:gz") as tar:
            for member in _members(tar):
                name = _clean_name(member.name)
                writer.admit(name)
                if member.isdir():
                    writer.folder(name)
                elif member.isreg():
                    total += member.size
                    _declared(total, writer.limits, size)
                    source = tar.extractfile(member)
                    assert source is not None
                    writer.file(name, source, bool(member.mode & 0o111))
                elif member.issym():
                    writer.symlink(name, member.linkname)
                elif member.islnk():
                    writer.hardlink(name, member.linkname)
                else:
                    raise ArchiveError(f"entry {name!r} is a device, FIFO or other special file: only files, "
                                       "folders and links inside the folder are allowed")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArchiveError(f"the .tar.gz archive is damaged ({exc})") from None


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members one at a time (``getmembers`` would read every header first)."""
    while (member := tar.next()) is not None:
        yield member


def _unzip(data: IO[bytes], size: int, writer: _Writer) -> None:
    try:
        with zipfile.ZipFile(data) as archive:
            infos = archive.infolist()
            if len(infos) > writer.limits.files:
                raise ArchiveError(f"too many files: at most {writer.limits.files} entries are allowed")
            _declared(sum(i.file_size for i in infos), writer.limits, size)
            for info in infos:
                name = _clean_name(info.filename)
                writer.admit(name)
                mode = info.external_attr >> 16
                if info.file_size > writer.limits.max_ratio * max(info.compress_size, 4096):
                    raise ArchiveError(f"entry {name!r}: compression ratio over {writer.limits.max_ratio}:1 "
                                       "(a zip bomb?)")
                if info.is_dir():
                    writer.folder(name)
                elif stat.S_ISLNK(mode):
                    if info.file_size > _MAX_LINK_TARGET:
                        raise ArchiveError(f"entry {name!r}: a symlink target that long is not allowed")
                    writer.symlink(name, archive.read(info).decode("utf-8", "replace"))
                elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):  # no type bits: a plain file
                    raise ArchiveError(f"entry {name!r} is a device, FIFO or other special file: only files, "
                                       "folders and links inside the folder are allowed")
                else:
                    with archive.open(info) as source:
                        writer.file(name, source, bool(mode & 0o111))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError) as exc:
        raise ArchiveError(f"the .zip archive is damaged or uses an unsupported feature ({exc})") from None


def _kind(head: bytes) -> Callable[[IO[bytes], int, _Writer], None]:
    if head.startswith(b"\x1f\x8b"):
        return _untar
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return _unzip
    raise ArchiveError("not a .tar.gz or .zip archive")


def unpack(data: IO[bytes], dest: Path, limits: ArchiveLimits) -> Path:
    """Unpack the archive ``data`` into the new folder ``dest``; returns the bot folder in it.

    The bot folder is the archive's top level, or its only top folder when the top level
    has no bot.toml (``tar czf bot.tar.gz mybot/``). On ArchiveError ``dest`` is removed.
    """
    data.seek(0, io.SEEK_END)
    size = data.tell()
    data.seek(0)
    if size > limits.archive_bytes:
        raise ArchiveError(f"archive over the quota of {limits.archive_bytes} bytes ({size} bytes)")
    unpacker = _kind(data.read(4))
    data.seek(0)
    dest.mkdir(parents=True)
    try:
        unpacker(data, size, _Writer(dest, limits))
        return _bot_folder(dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _bot_folder(root: Path) -> Path:
    if (root / MANIFEST).is_file():
        return root
    top = list(root.iterdir())
    if len(top) == 1 and top[0].is_dir() and not top[0].is_symlink() and (top[0] / MANIFEST).is_file():
        return top[0]
    raise ArchiveError(f"no {MANIFEST} at the top of the archive (nor in its one top folder)")


def pack(bot_dir: Path, ignore: Callable[[str], bool]) -> bytes:
    """A ``.tar.gz`` of ``bot_dir``'s contents (what ``arena submit --server`` uploads)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(bot_dir.rglob("*")):
            relative = path.relative_to(bot_dir)
            if any(ignore(part) for part in relative.parts):
                continue
            tar.add(path, arcname=str(relative), recursive=False)
    return buffer.getvalue()
