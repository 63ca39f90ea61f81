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
from collections import OrderedDict
from collections.abc import Callable, Iterator
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
    """
    CREATE TABLE bots (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        owner_id INTEGER NOT NULL REFERENCES users(id),
        disabled_reason TEXT,
        created_at TEXT NOT NULL
    );
    CREATE TABLE submissions (
        id INTEGER PRIMARY KEY,
        bot_id INTEGER NOT NULL REFERENCES bots(id),
        version INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'validating', 'accepted', 'rejected')),
        archive_bytes INTEGER NOT NULL,
        bot_path TEXT NOT NULL,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        report_json TEXT,
        reason TEXT,
        UNIQUE (bot_id, version)
    );
    CREATE INDEX submissions_by_status ON submissions (status, id);
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


@dataclass(frozen=True, slots=True)
class Bot:
    """A participant's bot: its name is its owner's for good; versions are its submissions."""

    id: int
    name: str
    owner_id: int
    owner: str
    disabled_reason: str | None

    @property
    def disabled(self) -> bool:
        """Whether the organiser took it out of play."""
        return self.disabled_reason is not None


@dataclass(frozen=True, slots=True)
class Submission:
    """One upload: a new version of a bot, and where its validation stands."""

    id: int
    bot: str
    bot_id: int
    owner_id: int
    owner: str
    version: int
    status: str
    archive_bytes: int
    bot_path: str
    created_at: str
    finished_at: str | None
    reason: str | None
    report: dict[str, Any] | None


class OwnershipError(ServerError):
    """A bot name that belongs to another participant."""

    code = "ownership"


class QuotaError(ServerError):
    """The uploader's daily submission quota is used up (the message says so)."""

    code = "quota"


def quota_reason(quota: int) -> str:
    """Why an upload past the daily quota is refused."""
    return f"daily quota reached: at most {quota} submissions in 24 hours"


FAILED_TOKENS = 4096  # fingerprints of recently refused tokens kept, so that a retry costs no scrypt


_BOT_SELECT = "SELECT b.*, u.name AS owner FROM bots b JOIN users u ON u.id = b.owner_id"
_COUNT_SINCE = ("SELECT count(*) FROM submissions s JOIN bots b ON b.id = s.bot_id WHERE b.owner_id = ? "
                "AND s.created_at >= ?")
_NEXT_QUEUED = ("SELECT s.id FROM submissions s JOIN bots b ON b.id = s.bot_id WHERE s.status = 'queued' "
                "ORDER BY (SELECT count(*) FROM submissions t JOIN bots c ON c.id = t.bot_id WHERE c.owner_id = "
                "b.owner_id AND t.status != 'queued' AND t.created_at >= ?), s.id LIMIT 1")
_SUBMISSION_SELECT = ("SELECT s.*, b.name AS bot, b.owner_id, u.name AS owner FROM submissions s "
                      "JOIN bots b ON b.id = s.bot_id JOIN users u ON u.id = b.owner_id")


def _bot(row: sqlite3.Row) -> Bot:
    return Bot(row["id"], row["name"], row["owner_id"], row["owner"], row["disabled_reason"])


def _submission(row: sqlite3.Row) -> Submission:
    return Submission(
        id=row["id"], bot=row["bot"], bot_id=row["bot_id"], owner_id=row["owner_id"], owner=row["owner"],
        version=row["version"], status=row["status"], archive_bytes=row["archive_bytes"], bot_path=row["bot_path"],
        created_at=row["created_at"], finished_at=row["finished_at"], reason=row["reason"],
        report=json.loads(row["report_json"]) if row["report_json"] else None,
    )


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
        self._failed: OrderedDict[str, None] = OrderedDict()
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
        """The account a bearer token belongs to, None for a wrong one.

        A verified token is remembered (by a hash of it) with its id, so later requests skip
        scrypt; the id is checked against the account's current one on every request, so a
        reset token stops working at once, in every server process.

        A token not of the issued shape is refused without scrypt, and so is one refused
        recently (a bounded set of their hashes): only a new well-formed guess costs a hash.
        """
        tid = tokens.token_id(token)
        if tid is None:
            return None
        key = tokens.fingerprint(token)
        with self._verified_lock:
            cached = self._verified.get(key)
            if cached is None and key in self._failed:
                self._failed.move_to_end(key)
                return None
        if cached is not None:
            row = self.db.execute("SELECT * FROM users WHERE id = ?", (cached,)).fetchone()
            if row is not None and row["token_id"] == tid:
                return _user(row)
            with self._verified_lock:  # reset since: no longer verified
                self._verified.pop(key, None)
        row = self.db.execute("SELECT * FROM users WHERE token_id = ?", (tid,)).fetchone()
        stored = tokens.HashedToken(row["token_id"], row["token_salt"], row["token_hash"]) if row else None
        if not tokens.matches(token, stored) or row is None:
            with self._verified_lock:
                self._failed[key] = None
                while len(self._failed) > FAILED_TOKENS:
                    self._failed.popitem(last=False)
            return None
        with self._verified_lock:
            self._verified[key] = row["id"]
        return _user(row)

    def is_verified(self, token: str) -> bool:
        """Whether ``token`` was verified by this process (and not seen reset since): no database, no scrypt."""
        key = tokens.fingerprint(token)
        with self._verified_lock:
            return key in self._verified

    def reset_token(self, name: str) -> str:
        """Give account ``name`` a new token (returned; the old one and its web sessions end)."""
        token, hashed = tokens.new_token()
        with self.transaction() as db:
            row = db.execute("SELECT id FROM users WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise ServerError(f"no account named {name!r}")
            db.execute("UPDATE users SET token_id = ?, token_salt = ?, token_hash = ? WHERE id = ?",
                       (hashed.token_id, hashed.salt, hashed.digest, row["id"]))
            db.execute("DELETE FROM sessions WHERE user_id = ?", (row["id"],))
            db.execute("INSERT INTO events (at, actor, what) VALUES (?, ?, ?)",
                       (stamp(), "arena server reset-token", f"new token for {name}"))
        return token

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

    # ------------------------------------------------------------------ bots and submissions

    def bots(self) -> list[Bot]:
        """Every bot, by name."""
        return [_bot(r) for r in self.db.execute(_BOT_SELECT + " ORDER BY b.name")]

    def bot(self, name: str) -> Bot | None:
        """A bot by name (case-insensitive)."""
        row = self.db.execute(_BOT_SELECT + " WHERE b.name = ?", (name,)).fetchone()
        return None if row is None else _bot(row)

    def submissions_since(self, user: User, since: datetime) -> int:
        """How many submissions ``user`` made since ``since``."""
        return int(self.db.execute(_COUNT_SINCE, (user.id, stamp(since))).fetchone()[0])

    def add_submission(self, user: User, bot_name: str, archive_bytes: int, place: Callable[[int], str]) -> Submission:
        """Queue a new version of ``user``'s bot ``bot_name`` (created on its first upload).

        ``place(id)`` moves the unpacked folder into place and returns its path (relative to
        the data folder); it runs inside the transaction, so a failure stores nothing.
        OwnershipError when another participant owns the name; QuotaError when ``user`` already
        made ``user.quotas.submissions_per_day`` submissions in the last 24 hours (counted inside
        the write transaction, so concurrent uploads cannot all slip past the quota).
        """
        quota = user.quotas.submissions_per_day
        with self.transaction() as db:
            made = db.execute(_COUNT_SINCE, (user.id, stamp(now() - timedelta(days=1)))).fetchone()[0]
            if made >= quota:
                raise QuotaError(quota_reason(quota))
            row = db.execute("SELECT id, owner_id FROM bots WHERE name = ?", (bot_name,)).fetchone()
            if row is None:
                bot_id = db.execute("INSERT INTO bots (name, owner_id, created_at) VALUES (?, ?, ?)",
                                    (bot_name, user.id, stamp())).lastrowid
            elif row["owner_id"] != user.id:
                raise OwnershipError(f"the bot name {bot_name!r} belongs to another participant: "
                                     "rename yours in its bot.toml")
            else:
                bot_id = row["id"]
            version = db.execute("SELECT coalesce(max(version), 0) + 1 FROM submissions WHERE bot_id = ?",
                                 (bot_id,)).fetchone()[0]
            sid = db.execute(
                "INSERT INTO submissions (bot_id, version, status, archive_bytes, bot_path, created_at) "
                "VALUES (?, ?, 'queued', ?, '', ?)", (bot_id, version, archive_bytes, stamp())).lastrowid
            assert sid is not None
            db.execute("UPDATE submissions SET bot_path = ? WHERE id = ?", (place(sid), sid))
        found = self.submission(sid)
        assert found is not None
        return found

    def submission(self, sid: int) -> Submission | None:
        """A submission by id."""
        row = self.db.execute(_SUBMISSION_SELECT + " WHERE s.id = ?", (sid,)).fetchone()
        return None if row is None else _submission(row)

    def submissions(self, owner_id: int | None = None, bot_id: int | None = None) -> list[Submission]:
        """Submissions, newest first: all, or one owner's, or one bot's."""
        where, args = [], []
        if owner_id is not None:
            where.append("b.owner_id = ?")
            args.append(owner_id)
        if bot_id is not None:
            where.append("s.bot_id = ?")
            args.append(bot_id)
        sql = _SUBMISSION_SELECT + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY s.id DESC"
        return [_submission(r) for r in self.db.execute(sql, args)]

    def claim_queued(self) -> Submission | None:
        """The next queued submission, now marked ``validating``; None when none waits.

        Fair among participants: the oldest submission of whoever had the fewest of theirs
        validated in the last 24 hours, so one participant's many (or slow) submissions cannot
        hold everybody else's back.
        """
        with self.transaction() as db:
            row = db.execute(_NEXT_QUEUED, (stamp(now() - timedelta(days=1)),)).fetchone()
            if row is None:
                return None
            db.execute("UPDATE submissions SET status = 'validating' WHERE id = ?", (row["id"],))
        return self.submission(row["id"])

    def requeue_interrupted(self) -> int:
        """Put submissions a stopped server left ``validating`` back in the queue; returns how many."""
        with self.transaction() as db:
            return db.execute("UPDATE submissions SET status = 'queued' WHERE status = 'validating'").rowcount

    def finish_submission(self, sid: int, accepted: bool, report: dict[str, Any] | None, reason: str | None) -> None:
        """Record the verdict of a validation."""
        with self.transaction() as db:
            db.execute("UPDATE submissions SET status = ?, report_json = ?, reason = ?, finished_at = ? WHERE id = ?",
                       ("accepted" if accepted else "rejected", json.dumps(report) if report is not None else None,
                        reason, stamp(), sid))

    def set_disabled(self, name: str, reason: str | None, *, actor: str) -> bool:
        """Take a bot out of play with a reason everyone sees (None: back in play); False if no such bot."""
        with self.transaction() as db:
            done = db.execute("UPDATE bots SET disabled_reason = ? WHERE name = ?", (reason, name)).rowcount
            if done:
                what = f"disabled {name}: {reason}" if reason is not None else f"enabled {name}"
                db.execute("INSERT INTO events (at, actor, what) VALUES (?, ?, ?)", (stamp(), actor, what))
        return bool(done)

    def active_versions(self) -> list[Submission]:
        """For each bot not disabled, its newest accepted submission: what the ladder plays."""
        rows = self.db.execute(
            _SUBMISSION_SELECT + " WHERE s.status = 'accepted' AND b.disabled_reason IS NULL AND s.version = "
            "(SELECT max(version) FROM submissions t WHERE t.bot_id = s.bot_id AND t.status = 'accepted') "
            "ORDER BY b.name")
        return [_submission(r) for r in rows]
