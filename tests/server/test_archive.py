"""Safe unpacking: every refusal has a hostile archive, and good archives unpack exactly."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

import pytest

from arena.server.archive import ArchiveError, ArchiveLimits, unpack

from .archives import bot_files, member, targz, zipped

pytestmark = pytest.mark.unit

LIMITS = ArchiveLimits(archive_bytes=1 << 20, unpacked_bytes=1 << 20, files=20, max_ratio=100)
BOT = list(bot_files("mybot").items())


def unpacked(data: bytes, tmp_path: Path, limits: ArchiveLimits = LIMITS) -> Path:
    return unpack(io.BytesIO(data), tmp_path / "out", limits)


@pytest.mark.parametrize("wrap", ["", "mybot/"])
def test_good_tar_and_zip_unpack_to_the_bot_folder(tmp_path: Path, wrap: str) -> None:
    entries = [(wrap + name, data) for name, data in BOT]
    for kind, data in (("tar", targz(entries)), ("zip", zipped(entries))):
        folder = unpacked(data, tmp_path / kind)
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == dict(BOT)
        assert folder == (tmp_path / kind / "out" / wrap.rstrip("/"))


def test_links_that_stay_inside_are_kept(tmp_path: Path) -> None:
    data = targz([*BOT, member("alias.py", tarfile.SYMTYPE, "bot.py"), member("copy.py", tarfile.LNKTYPE, "bot.py")])
    folder = unpacked(data, tmp_path)
    assert os.readlink(folder / "alias.py") == "bot.py"
    assert (folder / "copy.py").read_bytes() == (folder / "bot.py").read_bytes()
    assert not (folder / "copy.py").is_symlink()


HOSTILE_TAR: list[tuple[str, list[tarfile.TarInfo | tuple[str, bytes]], str]] = [
    ("absolute", [*BOT, ("/etc/evil", b"x")], "absolute paths are not allowed"),
    ("dotdot", [*BOT, ("../evil", b"x")], "'..' in a path is not allowed"),
    ("dotdot-deep", [*BOT, ("a/b/../../../evil", b"x")], "'..' in a path is not allowed"),
    ("symlink-out", [*BOT, member("escape", tarfile.SYMTYPE, "../../etc/passwd")], "leads outside the bot folder"),
    ("symlink-abs", [*BOT, member("escape", tarfile.SYMTYPE, "/etc/passwd")], "leads outside the bot folder"),
    ("through-link", [*BOT, member("d", tarfile.SYMTYPE, "."), ("d/x.py", b"x")], "writing through the link 'd'"),
    ("hardlink-out", [*BOT, member("h", tarfile.LNKTYPE, "/etc/passwd")], "hard link to '/etc/passwd' leads outside"),
    ("hardlink-missing", [*BOT, member("h", tarfile.LNKTYPE, "../x")], "leads outside the bot folder"),
    ("device", [*BOT, member("null", tarfile.CHRTYPE)], "is a device, FIFO or other special file"),
    ("block", [*BOT, member("disk", tarfile.BLKTYPE)], "is a device, FIFO or other special file"),
    ("fifo", [*BOT, member("pipe", tarfile.FIFOTYPE)], "is a device, FIFO or other special file"),
    ("twice", [*BOT, BOT[0]], "appears twice"),
    ("too-many", [*BOT, *((f"f{i}.txt", b"x") for i in range(20))], "too many files: at most 20"),
    ("unpacked-size", [*BOT, ("big.bin", os.urandom(600_000)), ("big2.bin", os.urandom(600_000))],
     "unpacked size over the quota"),
    ("bomb", [*BOT, ("zeros.bin", bytes(900_000))], "compression ratio over 100:1"),
    ("no-manifest", [("bot.py", b"x")], "no bot.toml at the top"),
]


@pytest.mark.parametrize(("case", "entries", "reason"), HOSTILE_TAR, ids=[c[0] for c in HOSTILE_TAR])
def test_hostile_tar_is_refused_with_a_reason_and_nothing_left(tmp_path: Path, case: str,
                                                               entries: list[tarfile.TarInfo | tuple[str, bytes]],
                                                               reason: str) -> None:
    limits = ArchiveLimits(archive_bytes=4 << 20, unpacked_bytes=1 << 20, files=20, max_ratio=100)
    with pytest.raises(ArchiveError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        unpacked(targz(entries), tmp_path, limits)
    assert not (tmp_path / "out").exists()
    assert not (tmp_path.parent / "evil").exists() and not (tmp_path / "evil").exists()


HOSTILE_ZIP: list[tuple[str, bytes, str]] = [
    ("absolute", zipped([*BOT, ("/tmp/evil", b"x")]), "absolute paths are not allowed"),
    ("dotdot", zipped([*BOT, ("../evil", b"x")]), "'..' in a path is not allowed"),
    ("backslash", zipped([*BOT, ("..\\evil", b"x")]), "backslash"),
    ("symlink-out", zipped(BOT, symlinks={"escape": "../../etc/passwd"}), "leads outside the bot folder"),
    ("bomb-ratio", zipped([*BOT, ("zeros.bin", bytes(800_000))]), "compression ratio over 100:1"),
    ("bomb-total", zipped([*BOT, *((f"z{i}.bin", os.urandom(300_000)) for i in range(4))]),
     "unpacked size over the quota"),
    ("too-many", zipped([*BOT, *((f"f{i}.txt", b"x") for i in range(20))]), "too many files: at most 20"),
    ("twice", zipped([*BOT, BOT[0]]), "appears twice"),
    ("damaged", zipped(BOT)[:-30], "damaged"),
    ("not-an-archive", b"hello, world", "not a .tar.gz or .zip archive"),
]


@pytest.mark.parametrize(("case", "data", "reason"), HOSTILE_ZIP, ids=[c[0] for c in HOSTILE_ZIP])
def test_hostile_zip_is_refused_with_a_reason(tmp_path: Path, case: str, data: bytes, reason: str) -> None:
    limits = ArchiveLimits(archive_bytes=4 << 20, unpacked_bytes=1 << 20, files=20, max_ratio=100)
    with pytest.raises(ArchiveError, match=reason):
        unpacked(data, tmp_path, limits)
    assert not (tmp_path / "out").exists()


def test_zip_device_entry_is_refused(tmp_path: Path) -> None:
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in BOT:
            archive.writestr(name, data)
        info = zipfile.ZipInfo("fifo")
        info.external_attr = (stat.S_IFIFO | 0o644) << 16
        archive.writestr(info, b"")
    with pytest.raises(ArchiveError, match="device, FIFO"):
        unpacked(buffer.getvalue(), tmp_path)


def test_an_oversize_archive_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    data = targz([*BOT, ("noise.bin", os.urandom(300_000))])
    with pytest.raises(ArchiveError, match=r"archive over the quota of 100000 bytes"):
        unpacked(data, tmp_path, ArchiveLimits(100_000, 1 << 20, 20, 100))
