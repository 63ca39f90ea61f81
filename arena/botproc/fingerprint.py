"""Fingerprints of what a bot runs: its own folder, and the project code it can import.

``fingerprint(bot_dir)`` identifies a bot's files (the registry and the results store key bots
by it). ``runtime_files()`` lists, file by file, the code every bot is shown from outside its
folder (the SDK packages under the sandbox's import root, see ``view``); a tournament stores it
when it starts, and ``runtime_changes`` names what differs when it is resumed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from arena.botproc.manifest import MANIFEST_NAME, ManifestError
from arena.botproc import view

IGNORED_DIRS = frozenset({"__pycache__"})


def _files(root: Path) -> Iterator[tuple[str, Path]]:
    """(relative path, path) of every file and symlink under ``root``; ``__pycache__`` left
    out, symlinked folders listed but never followed."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS]
        here = Path(dirpath)
        for name in filenames:
            yield (here / name).relative_to(root).as_posix(), here / name
        for name in dirnames:
            if (here / name).is_symlink():
                yield (here / name).relative_to(root).as_posix(), here / name


def _body(path: Path) -> bytes:
    """What a file contributes: ``F`` + its bytes, or ``L`` + a symlink's target text."""
    if path.is_symlink():
        return b"L" + os.readlink(path).encode("utf-8", "surrogateescape")
    return b"F" + path.read_bytes()


def fingerprint(bot_dir: Path | str) -> str:
    """sha256 (hex) over the bot folder: every file's relative path and content, sorted.

    ``__pycache__`` folders are ignored; a symlink counts as its target text, not followed.
    """
    root = Path(bot_dir)
    if not root.is_dir():
        raise ManifestError(root / MANIFEST_NAME, "no such bot folder")
    digest = hashlib.sha256()
    for rel, full in sorted(_files(root)):
        key = rel.encode("utf-8", "surrogateescape")
        body = _body(full)
        digest.update(len(key).to_bytes(8, "big") + key)
        digest.update(len(body).to_bytes(8, "big") + body)
    return digest.hexdigest()


def runtime_files() -> dict[str, str]:
    """sha256 (hex) of every file a bot is shown from the project, by its path under the
    sandbox's import root (``botkit/policies.py``, ``arena/__init__.py``, ...)."""
    files = {"arena/__init__.py": hashlib.sha256(b"F" + view.ARENA_STUB).hexdigest()}
    for prefix, folder in view.sdk_packages().items():
        for rel, full in _files(folder):
            files[f"{prefix}/{rel}"] = hashlib.sha256(_body(full)).hexdigest()
    return dict(sorted(files.items()))


def runtime_changes(then: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """What differs between two ``runtime_files()`` listings, one phrase per file
    (``botkit/policies.py changed``), sorted; [] when they are equal."""
    changes = [f"{p} changed" for p in then.keys() & now.keys() if then[p] != now[p]]
    changes += [f"{p} removed" for p in then.keys() - now.keys()]
    changes += [f"{p} added" for p in now.keys() - then.keys()]
    return sorted(changes)
