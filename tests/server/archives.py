"""Builders of bot archives for the tests, good and hostile."""

from __future__ import annotations

import gzip
import io
import tarfile
import warnings
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

from arena.server.archive import pack

ROOT = Path(__file__).resolve().parents[2]


def bot_files(name: str, source: str = "random") -> dict[str, bytes]:
    """A reference bot's files with its manifest renamed to ``name``."""
    folder = ROOT / "bots" / source
    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    manifest = files["bot.toml"].decode()
    original = next(line for line in manifest.splitlines() if line.startswith("name ="))
    files["bot.toml"] = manifest.replace(original, f'name = "{name}"').encode()
    return files


def bot_folder(tmp: Path, name: str, source: str = "random") -> Path:
    """A bot folder on disk (see ``bot_files``)."""
    folder = tmp / name
    folder.mkdir(parents=True)
    for file, data in bot_files(name, source).items():
        (folder / file).write_bytes(data)
    return folder


def bot_targz(name: str, source: str = "random") -> bytes:
    """A bot packed as ``arena submit --server`` packs it."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return pack(bot_folder(Path(tmp), name, source), lambda part: part == "__pycache__")


def targz(entries: Sequence[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    """A .tar.gz of ``(name, data)`` files and ready-made special members, in order."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for entry in entries:
            if isinstance(entry, tarfile.TarInfo):
                tar.addfile(entry)
            else:
                info = tarfile.TarInfo(entry[0])
                info.size = len(entry[1])
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(entry[1]))
    return buffer.getvalue()


def member(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    """A tar member of type ``kind`` (tarfile.SYMTYPE, LNKTYPE, CHRTYPE, FIFOTYPE, ...)."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.devmajor, info.devminor = 1, 3
    return info


def zipped(entries: list[tuple[str, bytes]], symlinks: dict[str, str] | None = None,
           compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A .zip of ``(name, data)`` files plus ``symlinks`` (name -> target)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        warnings.simplefilter("ignore")  # a name given twice is one of the hostile cases
        for name, data in entries:
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)
            archive.writestr(info, target)
    return buffer.getvalue()


def pax_bomb(declared: int) -> bytes:
    """A .tar.gz whose first member is a pax header declaring ``declared`` bytes of zeros (a few KiB
    compressed per MiB): tarfile would read such a header whole into memory."""
    header = tarfile.TarInfo("././@PaxHeader")
    header.type = tarfile.XHDTYPE
    header.size = declared
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    parts = [packer.compress(header.tobuf(format=tarfile.USTAR_FORMAT))]
    zeros = bytes(1 << 20)
    left = -(-declared // 512) * 512 + 1024  # the padded body, then the end-of-archive blocks
    while left > 0:
        parts.append(packer.compress(zeros[:min(left, len(zeros))]))
        left -= len(zeros)
    return b"".join([*parts, packer.flush()])


def metadata_chain(count: int, size: int) -> bytes:
    """A .tar.gz of ``count`` GNU long-name headers of ``size`` bytes each, then one empty file."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb") as out:
        for _ in range(count):
            header = tarfile.TarInfo("././@LongLink")
            header.type = tarfile.GNUTYPE_LONGNAME
            header.size = size
            out.write(header.tobuf(format=tarfile.GNU_FORMAT) + b"n" * size + bytes(-size % 512))
        out.write(tarfile.TarInfo("f").tobuf(format=tarfile.GNU_FORMAT) + bytes(1024))
    return buffer.getvalue()
