"""Making a data folder and its accounts (``arena server init`` and ``add-user``)."""

from __future__ import annotations

import re
from pathlib import Path

from arena.server.config import Quotas, ServerConfig, ServerError
from arena.server.db import DB_NAME, ORGANISER, PARTICIPANT, ServerDB, User

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}\Z")


def check_name(name: str, what: str) -> str:
    """``name`` if it can name an account or a bot; ServerError otherwise."""
    if not _NAME.match(name):
        raise ServerError(f"{what} {name!r} is not allowed: use 1 to 32 letters, digits, _ or -, "
                          "starting with a letter or digit")
    return name


def init_folder(folder: Path, config: ServerConfig, organiser: str = "organiser") -> tuple[User, str]:
    """Create the data folder with its database and the organiser's account; returns the token."""
    check_name(organiser, "account name")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ServerError(f"{folder}: is a file, not a folder")
    if (folder / DB_NAME).exists():
        raise ServerError(f"{folder}: already holds a server (its {DB_NAME}); use another folder")
    if folder.is_dir() and any(folder.iterdir()):
        raise ServerError(f"{folder}: is not empty; give a new or empty folder")
    folder.mkdir(parents=True, exist_ok=True)
    db = ServerDB(folder, create=True)
    (folder / DB_NAME).chmod(0o600)  # token hashes and sessions: the server's user only (WAL files follow)
    try:
        db.set_state("config", config.to_dict())
        return db.add_user(organiser, ORGANISER, config.quotas)
    finally:
        db.close()


def add_participant(folder: Path, name: str, quotas: Quotas | None = None) -> tuple[User, str]:
    """Add a participant with the server's default quotas (or ``quotas``); returns the token."""
    check_name(name, "account name")
    db = ServerDB(folder)
    try:
        return db.add_user(name, PARTICIPANT, quotas or db.config().quotas)
    finally:
        db.close()
