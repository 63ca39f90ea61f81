"""Static checks of a bot folder: it is self-contained, and its command can be executed."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from arena.botproc import Manifest
from arena.botproc.manifest import PYTHON_PLACEHOLDER
from arena.botproc.sandbox import clean_env

IGNORED_DIRS = frozenset({"__pycache__"})


def folder_problems(bot_dir: Path) -> tuple[list[str], int, int]:
    """Problems that keep ``bot_dir`` from being copied and run on its own: links that point
    outside it, are absolute or dangling, special files, and files the sandbox's unprivileged
    user could not read. Also the file count and size."""
    root = bot_dir.resolve()
    problems: list[str] = []
    files = size = 0
    unreadable = [] if _readable_by_others(root.stat().st_mode) else ["."]
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
        here = Path(dirpath)
        for name in sorted(dirnames) + sorted(filenames):
            path = here / name
            rel = path.relative_to(root).as_posix()
            try:
                info = path.lstat()
            except OSError as exc:
                problems.append(f"{rel}: cannot read: {exc.strerror}")
                continue
            if not stat.S_ISLNK(info.st_mode) and not _readable_by_others(info.st_mode):
                unreadable.append(rel)
            if stat.S_ISLNK(info.st_mode):
                problems.extend(_link_problem(root, path, rel))
            elif stat.S_ISREG(info.st_mode):
                files += 1
                size += info.st_size
            elif not stat.S_ISDIR(info.st_mode):
                problems.append(f"{rel}: a special file (fifo, socket or device) has no place in a bot folder")
    if unreadable:
        shown = ", ".join(unreadable[:5]) + (f" and {len(unreadable) - 5} more" if len(unreadable) > 5 else "")
        problems.append(f"{shown}: not readable by the bot's user (the sandbox runs it as nobody, "
                        f"not as the folder's owner); run chmod -R a+rX {bot_dir}")
    return problems, files, size


def _readable_by_others(mode: int) -> bool:
    """Whether a user who owns nothing may read this (and enter it, for a folder, or run it,
    for a program its owner may run)."""
    needed = stat.S_IROTH
    if stat.S_ISDIR(mode) or mode & stat.S_IXUSR:
        needed |= stat.S_IXOTH
    return mode & needed == needed


def _link_problem(root: Path, path: Path, rel: str) -> list[str]:
    target = os.readlink(path)
    if os.path.isabs(target):
        return [f"{rel} -> {target}: an absolute symlink; use a relative link inside the bot folder"]
    resolved = (path.parent / target).resolve()
    if resolved != root and root not in resolved.parents:
        return [f"{rel} -> {target}: the symlink points outside the bot folder (to {resolved})"]
    if not resolved.exists():
        return [f"{rel} -> {target}: a dangling symlink"]
    return []


def command_problem(manifest: Manifest) -> str | None:
    """Why ``manifest``'s command cannot be executed, or None: the program must exist and be
    executable (a path) or be on the bots' PATH; a ``{python}`` command's script must exist."""
    argv = manifest.argv()
    program = argv[0]
    written = manifest.command[0]
    if os.sep in program:
        path = Path(program)
        if not path.exists():
            return (f"command: the program {written!r} does not exist ({path}); "
                    "build it or fix 'command' in bot.toml")
        if path.is_dir():
            return f"command: the program {written!r} is a folder ({path})"
        if not os.access(path, os.X_OK):
            return (f"command: the program {written!r} is not executable ({path}); "
                    f"run chmod +x {written}")
    else:
        search = clean_env(home="/", manifest_env=manifest.env, extra={})["PATH"]
        if shutil.which(program, path=search) is None:
            return f"command: the program {written!r} is not on the bots' PATH ({search})"
    if written.strip() == PYTHON_PLACEHOLDER:
        script = next((a for a in manifest.command[1:] if not a.startswith("-")), None)
        if script is not None and script.endswith(".py") and not (manifest.bot_dir / script).is_file():
            return f"command: the script {script!r} is not in the bot folder ({manifest.bot_dir / script})"
    return None
