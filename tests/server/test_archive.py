"""Safe unpacking: every refusal has a hostile archive, and good archives unpack exactly."""

from __future__ import annotations

import io
import logging
import os
import shutil
import stat
import tarfile
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.server.archive import ArchiveError, ArchiveLimits, unpack

from .archives import bot_files, member, metadata_chain, pax_bomb, targz, zipped

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
    ("too-deep", [*BOT, ("z/" + "a/" * 1100 + "f", b"")], "paths deeper than 32 folders are not allowed"),
    ("too-long", [*BOT, ("/".join(["n" * 250] * 5), b"")], "paths longer than 1024 bytes are not allowed"),
    ("implicit-folders", [*BOT, *((f"d{i}/a/b/c/d/e/f.txt", b"x") for i in range(4))], "too many files: at most 20"),
    ("link-chain", [*BOT, member("a", tarfile.DIRTYPE), member("a/b", tarfile.DIRTYPE),
                    member("a/b/l", tarfile.SYMTYPE, "../.."), member("esc", tarfile.SYMTYPE, "a/b/l/../../..")],
     "entry 'esc': a symlink that leads outside the bot folder"),
    ("link-made-to-escape-later", [*BOT, member("x", tarfile.SYMTYPE, "d/.."), member("d", tarfile.SYMTYPE, ".")],
     "entry 'x': a symlink that leads outside the bot folder"),
    ("manifest-link", [*[e for e in BOT if e[0] != "bot.toml"], ("real.toml", dict(BOT)["bot.toml"]),
                       member("bot.toml", tarfile.SYMTYPE, "real.toml")], "bot.toml may not be a link"),
    ("manifest-link-in-top-folder", [("mybot/bot.py", b"x"), ("mybot/real.toml", dict(BOT)["bot.toml"]),
                                     member("mybot/bot.toml", tarfile.SYMTYPE, "real.toml")],
     "bot.toml may not be a link"),
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
    ("too-deep", zipped([*BOT, ("z/" + "a/" * 1100 + "f", b"")]), "paths deeper than 32 folders are not allowed"),
    ("implicit-folders", zipped([*BOT, *((f"d{i}/a/b/c/d/e/f.txt", b"x") for i in range(4))]),
     "too many files: at most 20"),
    ("link-chain", zipped(BOT, symlinks={"a/b/l": "../..", "esc": "a/b/l/../../.."}),
     "entry 'esc': a symlink that leads outside the bot folder"),
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


def test_paths_and_folders_within_the_limits_unpack(tmp_path: Path) -> None:
    deep = "a/" * 31 + "f.txt"  # 32 components, 31 of them folders made on the way
    folder = unpacked(targz([*BOT, member("a", tarfile.DIRTYPE), (deep, b"deep")]), tmp_path,
                      ArchiveLimits(1 << 20, 1 << 20, len(BOT) + 32, 100))
    assert (folder / deep).read_bytes() == b"deep"


def test_a_file_count_beyond_the_quota_in_implicit_folders_leaves_few_folders(tmp_path: Path) -> None:
    entries = [*BOT, *((f"z{i}/" + "a/" * 30 + "f", b"") for i in range(50))]
    made: list[int] = []
    real_mkdir = Path.mkdir

    def counting_mkdir(path: Path, *args: object, **kwargs: object) -> None:
        made.append(1)
        real_mkdir(path, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "mkdir", counting_mkdir)
        with pytest.raises(ArchiveError, match="too many files: at most 20"):
            unpacked(targz(entries), tmp_path)
    print(f"folders made for {len(entries)} entries: {len(made)}")
    assert len(made) <= 21  # the destination and at most the quota's worth
    assert not (tmp_path / "out").exists()


def refusal_and_peak(data: bytes, tmp_path: Path, limits: ArchiveLimits) -> tuple[str, int]:
    """The refusal's reason ('' if none) and the peak growth of the Python heap while unpacking."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        try:
            unpacked(data, tmp_path, limits)
            reason = ""
        except ArchiveError as exc:
            reason = str(exc)
        return reason, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_a_pax_header_bomb_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    data = pax_bomb(64 << 20)  # 64 MiB of header against a 1 MiB quota
    limits = ArchiveLimits(archive_bytes=4 << 20, unpacked_bytes=1 << 20, files=20, max_ratio=100)
    reason, peak = refusal_and_peak(data, tmp_path, limits)
    print(f"pax bomb of {len(data)} bytes: peak heap growth {peak / 2**20:.1f} MiB; refused: {reason[:120]}")
    assert "a tar metadata header of 67108864 bytes" in reason
    assert peak < 8 << 20
    assert not (tmp_path / "out").exists()


def test_a_zip_of_many_empty_entries_is_refused_before_its_directory_is_read(tmp_path: Path) -> None:
    """A 5 MB zip of 60,000 empty entries: zipfile made an object of each before the file-count
    check (a 32 MiB peak per upload). The entries are now counted in the directory's bytes first."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as archive:
        for i in range(60_000):
            archive.writestr(f"{i}", b"")
    limits = ArchiveLimits(archive_bytes=8 << 20, unpacked_bytes=1 << 20, files=500, max_ratio=100)
    reason, peak = refusal_and_peak(raw.getvalue(), tmp_path, limits)
    print(f"zip of 60,000 entries, {len(raw.getvalue())} bytes: peak heap growth {peak / 2**20:.1f} MiB")
    assert reason.startswith("too many files") and peak < 8 << 20


def test_metadata_headers_count_against_the_unpacked_quota(tmp_path: Path) -> None:
    data = metadata_chain(40, 60_000)  # each header small enough; together 2.4 MB against a 1 MiB quota
    limits = ArchiveLimits(archive_bytes=4 << 20, unpacked_bytes=1 << 20, files=20, max_ratio=100)
    reason, peak = refusal_and_peak(data, tmp_path, limits)
    print(f"metadata chain of {len(data)} bytes: peak heap growth {peak / 2**20:.1f} MiB; refused: {reason[:120]}")
    assert "the .tar.gz unpacks to more than" in reason
    assert peak < 8 << 20


SPARSE = {"1.0": ({"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": "f",
                   "GNU.sparse.realsize": "4"}, b"1\n0\n4\n".ljust(512, b"\0") + b"abcd"),
          "0.1": ({"GNU.sparse.map": "0,4", "GNU.sparse.name": "f", "GNU.sparse.size": "4"}, b"abcd")}


@pytest.mark.parametrize("version", list(SPARSE))
def test_a_sparse_file_is_refused(tmp_path: Path, version: str) -> None:
    sparse = tarfile.TarInfo("GNUSparseFile.0/f")
    sparse.pax_headers, body = SPARSE[version]
    sparse.size = len(body)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, content in BOT:
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
        tar.addfile(sparse, io.BytesIO(body))
    with pytest.raises(ArchiveError, match="sparse files are not supported"):
        unpacked(buffer.getvalue(), tmp_path)


def test_the_validator_logs_a_leftover_it_cannot_remove(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    from arena.server import validator

    def too_deep(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    leftover = tmp_path / "files"
    leftover.mkdir()
    monkeypatch.setattr(shutil, "rmtree", too_deep)
    with caplog.at_level(logging.WARNING, logger=validator.__name__):
        validator.remove_tree(leftover)
    assert f"could not remove {leftover}" in caplog.text
