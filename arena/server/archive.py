"""Safe unpacking of an uploaded bot archive (``.tar.gz`` or ``.zip``).

Everything is checked before or while it is written: the archive's size, each entry's name
(no absolute path, no ``..``, no name seen twice, at most 32 components and 1024 bytes), its
type (files, folders and links only: no device, FIFO, socket or sparse file), links (a
symlink's target and a hard link's source must stay inside the folder, and nothing is written
through a link), the number of files, folders (those made on the way included) and links
against the file quota, and sizes (the declared total, and for zip each member's compression
ratio, against the quotas; bytes are counted again as they are written). A tar is read as a
stream of at most the unpacked quota plus its headers' share of decompressed bytes, and no
tar metadata header (pax, GNU long name) over 64 KiB is read at all. Files are created with
``O_NOFOLLOW | O_EXCL`` and no mode bits but the owner's read/write and everyone's execute.
Once all is written, and before anything is read through them, every symlink is resolved
inside the folder (a chain of links may escape where each one alone stays in), and a
``bot.toml`` that is a link is refused. The first problem raises ``ArchiveError`` with a
reason a participant can act on.
"""

from __future__ import annotations

import gzip
import io
import os
import posixpath
import shutil
import stat
import struct
import tarfile
import zipfile
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Self

from arena.server.config import ServerError

MANIFEST = "bot.toml"
_CHUNK = 64 * 1024
_MAX_LINK_TARGET = 1024
_MAX_NAME_BYTES = 1024
_MAX_DEPTH = 32  # components in an entry's name or a link's target
_MAX_LINK_HOPS = 40  # links followed to resolve one path (the kernel's own limit)
_MAX_METADATA = 64 * 1024  # one pax or GNU long-name header's body
_HEADER_SHARE = 2048  # tar bytes one member may take beside its data: header, padding, a pax header
_METADATA_TYPES = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
                   tarfile.GNUTYPE_LONGLINK)


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


def _shown(raw: str) -> str:
    """An entry's name for a message: its repr, cut short."""
    return repr(raw) if len(raw) <= 80 else repr(raw[:60]) + f"... ({len(raw)} characters)"


def _check_size(raw: str, what: str) -> list[str]:
    """The path's components but '' and '.'; ArchiveError for one too long or too deep."""
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if len(parts) > _MAX_DEPTH:
        raise ArchiveError(f"{what} {_shown(raw)}: paths deeper than {_MAX_DEPTH} folders are not allowed")
    if len(raw.encode("utf-8", "surrogatepass")) > _MAX_NAME_BYTES:
        raise ArchiveError(f"{what} {_shown(raw)}: paths longer than {_MAX_NAME_BYTES} bytes are not allowed")
    return parts


def _clean_name(raw: str) -> str:
    """The entry's path inside the folder ('' for the root); ArchiveError for an escaping, too deep
    or too long one."""
    if "\0" in raw or "\\" in raw:
        raise ArchiveError(f"entry {_shown(raw)}: names may not hold NUL or backslash characters")
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise ArchiveError(f"entry {_shown(raw)}: absolute paths are not allowed")
    parts = _check_size(raw, "entry")
    if ".." in parts:
        raise ArchiveError(f"entry {_shown(raw)}: '..' in a path is not allowed")
    return "/".join(parts)


def _link_inside(name: str, target: str) -> bool:
    """Whether a symlink at ``name`` to ``target`` stays inside the folder (lexically: the
    links it goes through are checked by ``_resolves_inside`` once all is written)."""
    if not target or target.startswith("/") or "\0" in target:
        return False
    _check_size(target, f"entry {_shown(name)}: the symlink target")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    return resolved != ".." and not resolved.startswith("../")


def _resolves_inside(root: Path, name: str) -> bool:
    """Whether the path ``name`` under ``root`` stays inside it when every link on the way is
    followed, as the kernel would, with ``root`` taken as '/' (so it never depends on the names
    of the folders above it). A loop or a chain of over 40 links counts as outside."""
    todo = deque(name.split("/"))
    inside: list[str] = []  # the resolved path so far: real folders (or missing names), no links
    hops = 0
    while todo:
        part = todo.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            if not inside:
                return False
            inside.pop()
            continue
        path = root.joinpath(*inside, part)
        if not path.is_symlink():
            inside.append(part)
            continue
        hops += 1
        target = os.readlink(path)
        if hops > _MAX_LINK_HOPS or target.startswith("/"):
            return False
        todo.extendleft(reversed(target.split("/")))
    return True


def _too_many(limits: ArchiveLimits) -> ArchiveError:
    return ArchiveError(f"too many files: at most {limits.files} entries are allowed (files, links and folders, "
                        "the folders named in their paths included)")


class _Writer:
    """Writes entries under ``root`` and keeps the counts the limits bound."""

    def __init__(self, root: Path, limits: ArchiveLimits) -> None:
        self.root = root
        self.limits = limits
        self.made = 0
        self.written = 0
        self.seen: set[str] = set()
        self.files: set[str] = set()
        self.links: set[str] = set()

    def admit(self, name: str) -> None:
        """Refuse a second entry of the same name."""
        if name in self.seen:
            raise ArchiveError(f"entry {_shown(name)} appears twice in the archive")
        self.seen.add(name)

    def _count(self) -> None:
        """Count a file, folder or link about to be made; refuse one beyond the file quota."""
        self.made += 1
        if self.made > self.limits.files:
            raise _too_many(self.limits)

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
                self._count()
                here.mkdir(mode=0o755)
            elif not here.is_dir():
                raise ArchiveError(f"entry {name!r}: {'/'.join(parts[: index + 1])!r} is a file, not a folder")
        return here

    def folder(self, name: str) -> None:
        """A folder entry."""
        if name:
            path = self._parent(name) / name.rsplit("/", 1)[-1]
            if not path.is_dir():  # not made already on the way to an earlier entry
                self._count()
                path.mkdir(mode=0o755)

    def file(self, name: str, source: IO[bytes], executable: bool) -> None:
        """A regular file, its bytes counted against the unpacked quota as they are written."""
        if not name:
            raise ArchiveError("an archive entry without a name is not allowed")
        path = self._parent(name) / name.rsplit("/", 1)[-1]
        self._count()
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
        path = self._parent(name) / name.rsplit("/", 1)[-1]
        self._count()
        os.symlink(target, path)
        self.links.add(name)

    def check_links(self) -> None:
        """Refuse a symlink that leads outside the folder through other links (once all is written)."""
        for name in sorted(self.links):
            if not _resolves_inside(self.root, name):
                raise ArchiveError(f"entry {_shown(name)}: a symlink that leads outside the bot folder (through "
                                   "other links, or in a loop) is not allowed")

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


class _Bounded(io.RawIOBase):
    """A reader of ``source`` that refuses to give more than ``bound`` bytes."""

    def __init__(self, source: io.BufferedIOBase, bound: int) -> None:
        super().__init__()
        self.source = source
        self.left = bound

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1, /) -> bytes:
        wanted = self.left + 1 if size is None or size < 0 else min(size, self.left + 1)
        chunk = self.source.read(wanted)
        self.left -= len(chunk)
        if self.left < 0:
            raise ArchiveError("the .tar.gz unpacks to more than the unpacked quota plus its tar headers: "
                               "a decompression bomb?")
        return chunk


class _Header(tarfile.TarInfo):
    """A tar header that refuses what tarfile would read whole into memory: a metadata header
    (pax, GNU long name) over 64 KiB, and a sparse file's map (``_proc_sparse`` and
    ``_proc_gnusparse_10`` are tarfile's private hooks; were they renamed, the stream's byte
    bound would still hold, and the sparse tests would fail)."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
        header = super().frombuf(buf, encoding, errors)
        if header.type in _METADATA_TYPES and header.size > _MAX_METADATA:
            raise ArchiveError(f"a tar metadata header of {header.size} bytes: at most {_MAX_METADATA} "
                               "are allowed")
        return header

    def _proc_sparse(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
        raise ArchiveError(f"entry {_shown(self.name)}: sparse files are not supported")

    def _proc_gnusparse_10(self, member: tarfile.TarInfo, pax: dict[str, str], tar: tarfile.TarFile) -> None:
        raise ArchiveError(f"entry {_shown(member.name)}: sparse files are not supported")


def _untar(data: IO[bytes], size: int, writer: _Writer) -> None:
    total = 0
    limits = writer.limits
    bound = limits.unpacked_bytes + limits.files * _HEADER_SHARE + (1 << 20)
    try:
        with gzip.GzipFile(fileobj=data, mode="rb") as unzipped, \
                tarfile.open(fileobj=_Bounded(unzipped, bound), mode="r|", tarinfo=_Header) as tar:
            for member in _members(tar):
                name = _clean_name(member.name)
                writer.admit(name)
                if member.isdir():
                    writer.folder(name)
                elif member.issparse():  # pax 0.x sparse maps, at most 64 KiB: read, but not obeyed
                    raise ArchiveError(f"entry {_shown(name)}: sparse files are not supported")
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
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ArchiveError(f"the .tar.gz archive is damaged ({exc})") from None
    except RecursionError:  # tarfile reads a chain of metadata headers recursively
        raise ArchiveError("the .tar.gz archive has too many metadata headers in a row") from None


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members one at a time (``getmembers`` would read every header first). Each is
    dropped from ``tar.members`` (not in typeshed) as it comes: it holds a copy of the global
    pax header, which a thousand members must not keep a thousand times."""
    while (member := tar.next()) is not None:
        tar.members.clear()  # type: ignore[attr-defined]
        yield member


_END_OF_DIRECTORY = struct.Struct("<4s4H2LH")  # a zip's last record: where its central directory is
_DIRECTORY_ENTRY = b"PK\x01\x02"  # the signature of each entry of that directory


def _zip_entries(data: IO[bytes], size: int) -> int:
    """How many entries the zip's central directory holds, counted in its bytes (not read from
    its end record, which may lie) before ``zipfile`` makes an object of each."""
    tail_size = min(size, _END_OF_DIRECTORY.size + 0xFFFF)  # the record, and a comment of at most 64 KiB
    data.seek(size - tail_size)
    tail = data.read(tail_size)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _END_OF_DIRECTORY.size > len(tail):
        raise ArchiveError("the .zip archive is damaged (no end of central directory)")
    *_, directory_size, directory_at, _comment = _END_OF_DIRECTORY.unpack_from(tail, at)
    data.seek(min(directory_at, size))
    entries = data.read(min(directory_size, size)).count(_DIRECTORY_ENTRY)
    data.seek(0)
    return entries


def _unzip(data: IO[bytes], size: int, writer: _Writer) -> None:
    if _zip_entries(data, size) > writer.limits.files:  # before zipfile reads the whole directory
        raise _too_many(writer.limits)
    try:
        with zipfile.ZipFile(data) as archive:
            infos = archive.infolist()
            if len(infos) > writer.limits.files:
                raise _too_many(writer.limits)
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
        writer = _Writer(dest, limits)
        unpacker(data, size, writer)
        writer.check_links()
        return _bot_folder(dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _bot_folder(root: Path) -> Path:
    """The folder with the manifest: ``root`` or its one top folder; its bot.toml may not be a link."""
    top = list(root.iterdir())
    if not (root / MANIFEST).is_file() and len(top) == 1 and top[0].is_dir() and not top[0].is_symlink():
        root = top[0]
    if (root / MANIFEST).is_symlink():
        raise ArchiveError(f"{MANIFEST} may not be a link: put the file itself at the top of the archive")
    if (root / MANIFEST).is_file():
        return root
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
