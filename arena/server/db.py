"""The server's own database (``DIR/server.sqlite``): accounts, sessions, bots, submissions, state.

Separate from the ladder's results store (``DIR/ladder/arena.sqlite``, a ``results.store``
file). Same conventions as that store: WAL, ``BEGIN IMMEDIATE`` around every write, numbered
migrations in ``PRAGMA user_version``, an ``application_id`` that marks the file as ours. Each
thread gets its own connection.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from arena.server import tokens
from arena.server.config import Quotas, ServerConfig, ServerError

APPLICATION_ID = 0x36365356  # "66SV"
DB_NAME = "server.sqlite"
ORGANISER, PARTICIPANT = "organiser", "participant"
STATUSES = ("queued", "validating", "accepted", "rejected")

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE state (key TEXT PRIMARY KEY, value_json TEXT NOT NULL);
    CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        role TEXT NOT NULL CHECK (role IN ('organiser', 'participant')),
        token_id TEXT NOT NULL UNIQUE,
        token_salt BLOB NOT NULL,
        token_hash BLOB NOT NULL,
        quotas_json TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE sessions (
        key_hash TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        expires_at TEXT NOT NULL
    );
    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        what TEXT NOT NULL
    );
    """,
)


def now() -> datetime:
    """The current UTC time."""
    return datetime.now(UTC)


def stamp(at: datetime | None = None) -> str:
    """An ISO timestamp to the second."""
    return (at or now()).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class User:
    """An account."""

    id: int
    name: str
    role: str
    quotas: Quotas

    @property
    def organiser(self) -> bool:
        """Whether this account runs the competition."""
        return self.role == ORGANISER


def _user(row: sqlite3.Row) -> User:
    return User(row["id"], row["name"], row["role"], Quotas(**json.loads(row["quotas_json"])))


class ServerDB:
    """The data folder's database; safe to share between threads (one connection each)."""

    def __init__(self, folder: Path, *, create: bool = False) -> None:
        self.folder = Path(folder)
        self.path = self.folder / DB_NAME
        if not self.path.is_file() and not create:
            raise ServerError(f"{self.folder}: not a server data folder (no {DB_NAME}); "
                              f"make one with: arena server init {self.folder}")
        self._local = threading.local()
        self._verified: dict[str, int] = {}
        self._verified_lock = threading.Lock()
        self._open(create)

    # ------------------------------------------------------------------ connection

    def _open(self, create: bool) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path, isolation_level=None, timeout=10, check_same_thread=True)
            db.row_factory = sqlite3.Row
            app_id = db.execute("PRAGMA application_id").fetchone()[0]
            if app_id != APPLICATION_ID:
                tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if app_id != 0 or tables or not create:
                    db.close()
                    raise ServerError(f"{self.path}: not a Sixty-Six Arena server database")
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON", "busy_timeout = 10000"):
                db.execute(f"PRAGMA {pragma}")
        except sqlite3.DatabaseError as exc:
            raise ServerError(f"{self.path}: not a Sixty-Six Arena server database ({exc})") from exc
        self._local.db = db
        self._migrate(db)
        return db

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        return db if db is not None else self._open(False)

    def close(self) -> None:
        """Close this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    def _migrate(self, db: sqlite3.Connection) -> None:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise ServerError(f"{self.path}: written by a newer arena (schema {version}, this one knows "
                              f"{len(MIGRATIONS)})")
        for number in range(version, len(MIGRATIONS)):
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement in MIGRATIONS[number].split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {number + 1}")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolls back on any exception."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    # ------------------------------------------------------------------ state

    def get_state(self, key: str, default: Any = None) -> Any:
        """A stored setting or flag."""
        row = self.db.execute("SELECT value_json FROM state WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def set_state(self, key: str, value: Any, *, actor: str | None = None, what: str | None = None) -> None:
        """Store a setting or flag; with ``actor``, also log ``what`` in the event log."""
        with self.transaction() as db:
            db.execute("INSERT INTO state (key, value_json) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                       "SET value_json = excluded.value_json", (key, json.dumps(value)))
            if actor is not None:
                db.execute("INSERT INTO events (at, actor, what) VALUES (?, ?, ?)", (stamp(), actor, what or key))

    def config(self) -> ServerConfig:
        """The settings ``arena server init`` stored."""
        data = self.get_state("config")
        if data is None:
            raise ServerError(f"{self.folder}: the server was never initialised; run: arena server init {self.folder}")
        return ServerConfig.from_dict(data)

    def log_event(self, actor: str, what: str) -> None:
        """Append to the organiser's event log."""
        with self.transaction() as db:
            db.execute("INSERT INTO events (at, actor, what) VALUES (?, ?, ?)", (stamp(), actor, what))

    def events(self, limit: int = 100) -> list[sqlite3.Row]:
        """The newest events first."""
        return self.db.execute("SELECT * FROM events ORDER BY id DESC LIMIT ?", (limit,)).fetchall()

    # ------------------------------------------------------------------ accounts

    def add_user(self, name: str, role: str, quotas: Quotas) -> tuple[User, str]:
        """Create an account; returns it with its token (shown once, stored only hashed)."""
        token, hashed = tokens.new_token()
        try:
            with self.transaction() as db:
                uid = db.execute(
                    "INSERT INTO users (name, role, token_id, token_salt, token_hash, quotas_json, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (name, role, hashed.token_id, hashed.salt, hashed.digest, json.dumps(quotas.to_dict()), stamp()),
                ).lastrowid
        except sqlite3.IntegrityError:
            raise ServerError(f"there is already an account named {name!r}") from None
        assert uid is not None
        return User(int(uid), name, role, quotas), token

    def users(self) -> list[User]:
        """Every account, organiser first."""
        return [_user(r) for r in self.db.execute("SELECT * FROM users ORDER BY role DESC, id")]

    def user(self, user_id: int) -> User | None:
        """An account by id."""
        row = self.db.execute("SELECT * FROM users WHERE id = ?", (user_id,)).fetchone()
        return None if row is None else _user(row)

    def user_by_token(self, token: str) -> User | None:
        """The account a bearer token belongs to, None for a wrong one."""
        key = tokens.fingerprint(token)
        with self._verified_lock:
            cached = self._verified.get(key)
        if cached is not None:
            return self.user(cached)
        tid = tokens.token_id(token)
        row = self.db.execute("SELECT * FROM users WHERE token_id = ?", (tid,)).fetchone() if tid else None
        stored = tokens.HashedToken(row["token_id"], row["token_salt"], row["token_hash"]) if row else None
        if not tokens.matches(token, stored) or row is None:
            return None
        with self._verified_lock:
            self._verified[key] = row["id"]
        return _user(row)

    # ------------------------------------------------------------------ web sessions

    def new_session(self, user: User, hours: int) -> str:
        """A web session for ``user``: the cookie value (stored only hashed)."""
        key = secrets.token_urlsafe(32)
        with self.transaction() as db:
            db.execute("DELETE FROM sessions WHERE expires_at < ?", (stamp(),))
            db.execute("INSERT INTO sessions (key_hash, user_id, expires_at) VALUES (?, ?, ?)",
                       (tokens.fingerprint(key), user.id, stamp(now() + timedelta(hours=hours))))
        return key

    def user_by_session(self, key: str) -> User | None:
        """The account of a live web session."""
        row = self.db.execute("SELECT user_id, expires_at FROM sessions WHERE key_hash = ?",
                              (tokens.fingerprint(key),)).fetchone()
        if row is None or row["expires_at"] < stamp():
            return None
        return self.user(row["user_id"])

    def end_session(self, key: str) -> None:
        """Log a web session out."""
        with self.transaction() as db:
            db.execute("DELETE FROM sessions WHERE key_hash = ?", (tokens.fingerprint(key),))
