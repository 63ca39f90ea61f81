"""Builders of bot archives for the tests, good and hostile."""

from __future__ import annotations

import io
import tarfile
import warnings
import zipfile
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
