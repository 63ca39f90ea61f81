"""The results store: one SQLite file per tournament output folder.

WAL, one writer, ``BEGIN IMMEDIATE`` around every write, one transaction per finished pair
(both matches with their hands, faults and think times, plus the rating snapshots the pair
made possible). Schema changes are numbered migrations recorded in ``PRAGMA user_version``;
``PRAGMA application_id`` marks the file as ours so a foreign database is refused.

Match seeds are 128-bit integers under secret deals, wider than SQLite's INTEGER, so they are
stored as decimal text in columns declared ``SEEDTEXT`` (text affinity), which this module's
connections read back as ``int``. A tournament's secret deal key lives in ``deal_keys``, read
only through ``deals()``; a store holding one is made readable by its owner only.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path

import orjson

from arena.engine.deals import Deals
from arena.engine.records import EntrantRecord, MatchOutcome, Pair, Think, TournamentSettings

from .errors import StoreError
from .rows import (FaultRow, HandRow, MatchRow, SeatingHands, SnapshotRow, StoredEntrant, StoredPair, ThinkRow,
                   TournamentRow)

log = logging.getLogger(__name__)

APPLICATION_ID = 0x36364152  # "66AR"
DB_NAME = "arena.sqlite"

# Each migration is a list of statements, run in order in one transaction; the number of
# migrations applied is the PRAGMA user_version.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """
        CREATE TABLE tournaments (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            seed INTEGER NOT NULL,
            config_json TEXT NOT NULL,
            created_at TEXT NOT NULL,
            finished_at TEXT
        )
        """,
        """
        CREATE TABLE bots (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            version TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            path TEXT NOT NULL,
            UNIQUE (name, version, fingerprint)
        )
        """,
        """
        CREATE TABLE entrants (
            tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
            entrant INTEGER NOT NULL,
            bot_id INTEGER NOT NULL REFERENCES bots(id),
            label TEXT NOT NULL,
            PRIMARY KEY (tournament_id, entrant),
            UNIQUE (tournament_id, label)
        )
        """,
        """
        CREATE TABLE pairs (
            tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
            pair_index INTEGER NOT NULL,
            entrant_a INTEGER NOT NULL,
            entrant_b INTEGER NOT NULL,
            seed INTEGER NOT NULL,
            finished_at TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (tournament_id, pair_index)
        )
        """,
        """
        CREATE TABLE matches (
            id INTEGER PRIMARY KEY,
            tournament_id INTEGER NOT NULL,
            pair_index INTEGER NOT NULL,
            half INTEGER NOT NULL CHECK (half IN (0, 1)),
            match_id TEXT NOT NULL,
            seed INTEGER NOT NULL,
            seat0 INTEGER NOT NULL,
            seat1 INTEGER NOT NULL,
            winner_seat INTEGER CHECK (winner_seat IN (0, 1)),
            score0 INTEGER NOT NULL,
            score1 INTEGER NOT NULL,
            forfeit INTEGER NOT NULL,
            void INTEGER NOT NULL,
            hands INTEGER NOT NULL,
            interrupted_json TEXT,
            UNIQUE (tournament_id, pair_index, half),
            FOREIGN KEY (tournament_id, pair_index) REFERENCES pairs(tournament_id, pair_index)
        )
        """,
        """
        CREATE TABLE hands (
            match_row INTEGER NOT NULL REFERENCES matches(id),
            hand_index INTEGER NOT NULL,
            winner_seat INTEGER,
            game_points INTEGER NOT NULL,
            reason TEXT NOT NULL,
            total0 INTEGER NOT NULL,
            total1 INTEGER NOT NULL,
            tricks0 INTEGER NOT NULL,
            tricks1 INTEGER NOT NULL,
            record_json TEXT NOT NULL,
            PRIMARY KEY (match_row, hand_index)
        )
        """,
        """
        CREATE TABLE faults (
            id INTEGER PRIMARY KEY,
            match_row INTEGER NOT NULL REFERENCES matches(id),
            seat INTEGER,
            entrant INTEGER,
            kind TEXT NOT NULL CHECK (kind IN ('crash', 'timeout', 'malformed', 'illegal', 'disconnect',
                                               'protocol', 'harness')),
            detail TEXT NOT NULL,
            fault_json TEXT NOT NULL
        )
        """,
        """
        CREATE TABLE think_times (
            match_row INTEGER NOT NULL REFERENCES matches(id),
            seat INTEGER NOT NULL,
            entrant INTEGER NOT NULL,
            times_ms_json TEXT NOT NULL,
            PRIMARY KEY (match_row, seat)
        )
        """,
        """
        CREATE TABLE rating_snapshots (
            tournament_id INTEGER NOT NULL,
            after_pair INTEGER NOT NULL,
            entrant INTEGER NOT NULL,
            mu REAL NOT NULL,
            sigma REAL NOT NULL,
            PRIMARY KEY (tournament_id, after_pair, entrant)
        )
        """,
        "CREATE INDEX faults_by_entrant ON faults (entrant)",
    ),
    (  # 2: secret deals. Seeds become SEEDTEXT (128-bit); the key gets its own table (no key: public deals).
        "ALTER TABLE pairs ADD COLUMN seed_text SEEDTEXT NOT NULL DEFAULT ''",
        "UPDATE pairs SET seed_text = CAST(seed AS TEXT)",
        "ALTER TABLE pairs DROP COLUMN seed",
        "ALTER TABLE pairs RENAME COLUMN seed_text TO seed",
        "ALTER TABLE matches ADD COLUMN seed_text SEEDTEXT NOT NULL DEFAULT ''",
        "UPDATE matches SET seed_text = CAST(seed AS TEXT)",
        "ALTER TABLE matches DROP COLUMN seed",
        "ALTER TABLE matches RENAME COLUMN seed_text TO seed",
        """
        CREATE TABLE deal_keys (
            tournament_id INTEGER PRIMARY KEY REFERENCES tournaments(id),
            key BLOB NOT NULL CHECK (length(key) = 32)
        )
        """,
    ),
    (  # 3: the project code every bot runs beside its own folder (path -> sha256), per tournament.
        """
        CREATE TABLE runtimes (
            tournament_id INTEGER PRIMARY KEY REFERENCES tournaments(id),
            files_json TEXT NOT NULL
        )
        """,
    ),
    (  # 4: each decision's CPU time beside its wall time (null where it was not measured).
        "ALTER TABLE think_times ADD COLUMN cpu_ms_json TEXT",
    ),
    (  # 5: why an entrant's remaining pairs are refused (it changed during the run); NULL: it plays.
        "ALTER TABLE entrants ADD COLUMN withdrawn TEXT",
    ),
)

sqlite3.register_converter("SEEDTEXT", int)  # int(b"123") == 123


_SQLITE_HEADER = b"SQLite format 3\x00"
_DISK_FULL = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR})


_HAND_NAMES = [field.name for field in fields(HandRow)]  # a row record's fields are its table's columns, in order
_MATCH_COLUMNS = ", ".join(field.name for field in fields(MatchRow))
_HAND_COLUMNS = ", ".join(_HAND_NAMES)


class DiskFullError(StoreError, OSError):
    """A write failed because the disk holding the database is full (or failing).

    Also an ``OSError`` with ``errno.ENOSPC``, as a full disk is anywhere else: the runner
    recognises it without knowing the store (``arena.sink.disk_full``).
    """

    code = "disk_full"

    def __init__(self, message: str) -> None:
        super().__init__(errno.ENOSPC, message)

    def __str__(self) -> str:
        return str(self.strerror)


def _apply_migrations(db: sqlite3.Connection, version: int) -> None:
    """Run the migrations after ``version``, statement by statement, and record the new version."""
    for number in range(version, len(MIGRATIONS)):
        for statement in MIGRATIONS[number]:
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {number + 1}")


def _as_store_error(path: Path, exc: sqlite3.Error) -> StoreError:
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code in _DISK_FULL:
        return DiskFullError(f"{path}: the disk is full or failing ({exc}); what was being written was not "
                             f"stored, earlier results are intact. Free some space, then resume")
    if isinstance(exc, sqlite3.IntegrityError):
        log.info("%s: a write contradicts the stored results", path, exc_info=exc)  # arena.log only: for a bug of ours
        return StoreError(f"{path}: the stored results contradict each other ({exc}): the database was changed "
                          f"outside the arena, or this is a bug of the arena's (arena.log has the traceback); "
                          f"'arena verify {path.parent}' checks it")
    return StoreError(f"{path}: {exc}")


def _engine_json(value: object) -> str:
    """Compact JSON, by orjson, of what the harness made (hand records, think times): for these values
    the text ``json.dumps(value, separators=(",", ":"))`` writes, for a third of its CPU. Faults,
    which are rare and carry a bot's text (orjson writes non-ASCII unescaped), keep the stdlib's form."""
    return orjson.dumps(value).decode()


def _think_json(thinks: Sequence[Think]) -> tuple[str, str]:
    """One seat's decision times as stored: wall and CPU ms (null: not measured), rounded to the microsecond.

    ``round(ms * 1000) / 1000``, half the CPU of ``round(ms, 3)`` (which rounds through a decimal
    string); the two differ only on a value within an ulp of a half microsecond, by that microsecond.
    """
    wall = [round(t.wall_ms * 1000) / 1000 for t in thinks]
    cpu = [None if t.cpu_ms is None else round(t.cpu_ms * 1000) / 1000 for t in thinks]
    return _engine_json(wall), _engine_json(cpu)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
    """A results database; use as a context manager. All writes go through ``transaction()``.

    Every command opens its database here, and the checks come before anything is written:
    a missing file is created only with ``create`` (built aside, then renamed into place, so
    a crash never leaves a half-made database); an empty, foreign, damaged or newer file is
    refused with a StoreError and left as it was; a read-only open never migrates.
    ``check_integrity`` runs SQLite's ``quick_check`` (it reads the whole file; a poller that
    opens the store again and again may skip it).
    """

    def __init__(self, path: Path, *, create: bool = False, readonly: bool = False,
                 check_integrity: bool = True) -> None:
        self.path = Path(path)
        self._savepoints = 0
        if create and readonly:
            raise ValueError("a read-only store cannot be created")
        if not self.path.exists():
            if not create:
                raise StoreError(f"{self.path}: no results database here")
            self._build()
        self._check_file()
        try:
            if readonly:
                self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None, timeout=10,
                                          detect_types=sqlite3.PARSE_DECLTYPES)
            else:
                self.db = sqlite3.connect(self.path, isolation_level=None, timeout=10,
                                          detect_types=sqlite3.PARSE_DECLTYPES)
            self.db.row_factory = sqlite3.Row
            self._check_identity()
            self._configure(readonly)
            if check_integrity:
                self._check_integrity()
            self._migrate(readonly)
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreError(f"{self.path}: not a Sixty-Six Arena results database ({exc})") from exc
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (idempotent)."""
        db = getattr(self, "db", None)
        if db is not None:
            db.close()
            del self.db  # a closed store has no connection: using it raises AttributeError

    def _build(self) -> None:
        """Make a new, fully migrated database beside ``path``, then rename it into place."""
        draft = self.path.with_name(self.path.name + ".new")
        draft.unlink(missing_ok=True)
        db = sqlite3.connect(draft, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")  # one commit: a statement each would cost a disk sync each
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            _apply_migrations(db, 0)
            db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            db.close()
            draft.unlink(missing_ok=True)
            raise _as_store_error(self.path, exc) from exc
        db.close()
        os.replace(draft, self.path)

    def _check_file(self) -> None:
        """Refuse what is not an SQLite file at all before SQLite opens (and might write) it."""
        if not self.path.is_file():
            raise StoreError(f"{self.path}: not a file")
        try:
            with self.path.open("rb") as fh:
                header = fh.read(len(_SQLITE_HEADER))
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot read the results database ({exc.strerror or exc})") from None
        if not header:
            raise StoreError(f"{self.path}: is empty (0 bytes), so it holds no results; it was left as it is. "
                             f"Remove it to start the tournament over, or restore it from a backup")
        if header != _SQLITE_HEADER:
            raise StoreError(f"{self.path}: not a Sixty-Six Arena results database (not an SQLite file)")

    def _configure(self, readonly: bool) -> None:
        pragmas = {"foreign_keys": "ON", "busy_timeout": "10000"}
        if not readonly:
            pragmas.update(journal_mode="WAL", synchronous="NORMAL")
        for name, value in pragmas.items():
            self.db.execute(f"PRAGMA {name} = {value}")
        if not readonly:
            mode = self.db.execute("PRAGMA journal_mode").fetchone()[0]
            if mode.lower() != "wal":
                raise StoreError(f"{self.path}: could not switch to WAL journaling (got {mode})")
        if self.db.execute("PRAGMA foreign_keys").fetchone()[0] != 1:
            raise StoreError(f"{self.path}: foreign keys could not be enabled")

    def _check_identity(self) -> None:
        """Refuse a foreign SQLite file before changing anything in it."""
        if self.db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            raise StoreError(f"{self.path}: not a Sixty-Six Arena results database")

    def _check_integrity(self) -> None:
        try:
            problems = [row[0] for row in self.db.execute("PRAGMA quick_check(3)")]
        except sqlite3.DatabaseError as exc:
            problems = [str(exc)]
        if problems != ["ok"]:
            found = "; ".join(" ".join(problem.split()) for problem in problems)  # one line: SQLite's may hold several
            raise StoreError(f"{self.path}: the results database is damaged ({found}); it was "
                             f"left as it is. Restore it from a backup, or start over in a new folder")

    def _migrate(self, readonly: bool) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise StoreError(f"{self.path}: written by a newer arena (schema {version}, this one knows "
                             f"{len(MIGRATIONS)})")
        if version == len(MIGRATIONS):
            return
        if readonly:
            raise StoreError(f"{self.path}: uses results schema {version}, this arena uses {len(MIGRATIONS)}; "
                             f"a writer must migrate it first ('arena resume' on its folder)")
        with self.transaction():
            _apply_migrations(self.db, version)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``, or a savepoint inside an open transaction.

        On an exception (or a failed ``COMMIT``) the work is rolled back if SQLite still has a
        transaction open, and the original error is what propagates. A full disk, an I/O
        failure or rows that contradict each other (a database changed by hand) become
        DiskFullError / StoreError naming the file.
        """
        try:
            if self.db.in_transaction:
                with self._savepoint():
                    yield self.db
                return
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
                self.db.execute("COMMIT")
            except BaseException:
                self._rollback("ROLLBACK")
                raise
        except (sqlite3.OperationalError, sqlite3.IntegrityError) as exc:  # the disk, the file, contradicting rows
            raise _as_store_error(self.path, exc) from exc

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        self._savepoints += 1
        name = f"nested_{self._savepoints}"
        self.db.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            self._rollback(f"ROLLBACK TO {name}", f"RELEASE {name}")
            raise
        else:
            self.db.execute(f"RELEASE {name}")
        finally:
            self._savepoints -= 1

    def _rollback(self, *statements: str) -> None:
        """Undo an open transaction; never let a failing rollback hide the error being handled."""
        if not self.db.in_transaction:
            return
        try:
            for statement in statements:
                self.db.execute(statement)
        except sqlite3.Error:
            log.exception("%s: rollback failed", self.path)

    # ------------------------------------------------------------------ set-up

    def create_tournament(self, name: str, seed: int, settings: TournamentSettings,
                          entrants: Sequence[EntrantRecord], pairs: Sequence[Pair],
                          deal_key: bytes | None = None) -> int:
        """Store a new tournament, its entrants (bots), its whole schedule and its secret deal key
        (None: public deals); returns its id."""
        if deal_key is not None:
            self._owner_only()
        with self.transaction() as db:
            tid = db.execute(
                "INSERT INTO tournaments (name, seed, config_json, created_at) VALUES (?, ?, ?, ?)",
                (name, seed, json.dumps(settings.document, sort_keys=True), _now()),
            ).lastrowid
            assert tid is not None
            if deal_key is not None:
                db.execute("INSERT INTO deal_keys (tournament_id, key) VALUES (?, ?)", (tid, deal_key))
            for index, bot in enumerate(entrants):
                self._insert_entrant(tid, index, bot)
            db.executemany(
                "INSERT INTO pairs (tournament_id, pair_index, entrant_a, entrant_b, seed) VALUES (?, ?, ?, ?, ?)",
                [(tid, p.index, p.a, p.b, str(p.seed)) for p in pairs],
            )
        return int(tid)

    def record_runtime(self, tid: int, files: dict[str, str]) -> None:
        """Store the digests of the project files the bots run (``runtime_files()``), once."""
        with self.transaction() as db:
            db.execute("INSERT INTO runtimes (tournament_id, files_json) VALUES (?, ?)",
                       (tid, json.dumps(files, sort_keys=True)))

    def runtime(self, tid: int) -> dict[str, str] | None:
        """The runtime digests stored for the tournament; None for a store made before them."""
        row = self.db.execute("SELECT files_json FROM runtimes WHERE tournament_id = ?", (tid,)).fetchone()
        if row is None:
            return None
        files = json.loads(row[0])
        return {str(k): str(v) for k, v in files.items()}

    def _owner_only(self) -> None:
        """Make the database (and its WAL and shared-memory files) readable by its owner only."""
        for suffix in ("", "-wal", "-shm"):
            part = self.path.with_name(self.path.name + suffix)
            if part.exists():
                part.chmod(0o600)

    def bytes_on_disk(self) -> int:
        """What the database takes on disk now: its file and its WAL."""
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += self.path.with_name(self.path.name + suffix).stat().st_size
            except OSError:
                continue
        return total

    def add_entrant(self, tid: int, bot: EntrantRecord) -> int:
        """Append an entrant to a tournament that grows (the competition server's ladder); returns
        its number. Idempotent: an entrant with the same label is returned as it is."""
        with self.transaction() as db:
            row = db.execute("SELECT entrant FROM entrants WHERE tournament_id = ? AND label = ?",
                             (tid, bot.label)).fetchone()
            if row is not None:
                return int(row[0])
            entrant = db.execute("SELECT coalesce(max(entrant), -1) + 1 FROM entrants WHERE tournament_id = ?",
                                 (tid,)).fetchone()[0]
            self._insert_entrant(tid, entrant, bot)
        return int(entrant)

    def _insert_entrant(self, tid: int, entrant: int, bot: EntrantRecord) -> None:
        """Enter ``bot`` as entrant number ``entrant`` (its bot row shared by every tournament of the store)."""
        self.db.execute("INSERT OR IGNORE INTO bots (name, version, fingerprint, path) VALUES (?, ?, ?, ?)",
                        (bot.name, bot.version, bot.fingerprint, bot.path))
        bot_id = self.db.execute("SELECT id FROM bots WHERE name = ? AND version = ? AND fingerprint = ?",
                                 (bot.name, bot.version, bot.fingerprint)).fetchone()[0]
        self.db.execute("INSERT INTO entrants (tournament_id, entrant, bot_id, label) VALUES (?, ?, ?, ?)",
                        (tid, entrant, bot_id, bot.label))

    def add_pair(self, tid: int, a: int, b: int, seed_of: Callable[[int], int]) -> int:
        """Schedule one more pair (``a`` against ``b``) at the next pair index; its seed is
        ``seed_of(index)``. Returns the index. The pair is stored before it is played, so a
        restart plays it again with the same seed rather than counting it twice."""
        with self.transaction() as db:
            index = db.execute("SELECT coalesce(max(pair_index), -1) + 1 FROM pairs WHERE tournament_id = ?",
                               (tid,)).fetchone()[0]
            db.execute("INSERT INTO pairs (tournament_id, pair_index, entrant_a, entrant_b, seed) VALUES (?, ?, ?, ?, ?)",
                       (tid, index, a, b, str(seed_of(index))))
        return int(index)

    # ------------------------------------------------------------------ reads

    @contextmanager
    def read_transaction(self) -> Iterator[None]:
        """Reads that see one state of the database: a pair another process stores meanwhile (a
        running tournament, the ladder) shows up in all of them or in none."""
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("ROLLBACK")

    def has_tournament(self) -> bool:
        """Whether a tournament was created in this store."""
        return self.db.execute("SELECT 1 FROM tournaments LIMIT 1").fetchone() is not None

    def tournament(self) -> TournamentRow:
        """The folder's tournament (there is exactly one)."""
        row = self.db.execute("SELECT id, name, seed, config_json, created_at, finished_at FROM tournaments "
                              "ORDER BY id LIMIT 1").fetchone()
        if row is None:
            raise StoreError(f"{self.path}: holds no tournament")
        tid, name, seed, config_json, created_at, finished_at = row
        try:
            settings = TournamentSettings.from_dict(json.loads(config_json))
        except (ValueError, AttributeError) as exc:  # AttributeError: the JSON is not an object
            raise StoreError(f"{self.path}: the tournament's settings are malformed ({exc})") from None
        return TournamentRow(tid, name, seed, settings, created_at, finished_at)

    def deals(self, tid: int) -> Deals:
        """Where the tournament's deals come from: its secret key, or (no key stored, as in stores
        made before keys existed) its public seed."""
        row = self.db.execute("SELECT key FROM deal_keys WHERE tournament_id = ?", (tid,)).fetchone()
        if row is not None:
            return Deals.secret(bytes(row[0]))
        seed = self.db.execute("SELECT seed FROM tournaments WHERE id = ?", (tid,)).fetchone()
        if seed is None:
            raise StoreError(f"{self.path}: holds no tournament {tid}")
        return Deals.public(seed[0])

    def entrants(self, tid: int) -> list[StoredEntrant]:
        """Entrants with their bots, by entrant number."""
        rows = self.db.execute(
            "SELECT e.entrant, e.label, e.withdrawn, b.name, b.version, b.fingerprint, b.path "
            "FROM entrants e JOIN bots b ON b.id = e.bot_id WHERE e.tournament_id = ? ORDER BY e.entrant",
            (tid,),
        )
        return [StoredEntrant(number, EntrantRecord(name, version, fingerprint, path, label), withdrawn)
                for number, label, withdrawn, name, version, fingerprint, path in rows]

    def pairs(self, tid: int, pair_index: int | None = None) -> list[StoredPair]:
        """Every scheduled pair in schedule order; only pair ``pair_index`` (if scheduled) with it."""
        where, args = ("AND pair_index = ?", (tid, pair_index)) if pair_index is not None else ("", (tid,))
        rows = self.db.execute("SELECT pair_index, entrant_a, entrant_b, seed, finished_at, attempts FROM pairs "
                               f"WHERE tournament_id = ? {where} ORDER BY pair_index", args)
        return [StoredPair(Pair(index, a, b, seed), finished_at, attempts)
                for index, a, b, seed, finished_at, attempts in rows]

    def finished_pairs(self, tid: int) -> set[int]:
        """Indices of the pairs whose results are stored."""
        rows = self.db.execute("SELECT pair_index FROM pairs WHERE tournament_id = ? AND finished_at IS NOT NULL",
                               (tid,))
        return {row[0] for row in rows}

    def matches(self, tid: int, pair_index: int | None = None) -> list[MatchRow]:
        """Every stored match in schedule order (pair index, then half); only one pair's with ``pair_index``."""
        if pair_index is not None:
            rows = self.db.execute(f"SELECT {_MATCH_COLUMNS} FROM matches WHERE tournament_id = ? AND pair_index = ? "
                                   "ORDER BY half", (tid, pair_index))
        else:
            rows = self.db.execute(f"SELECT {_MATCH_COLUMNS} FROM matches WHERE tournament_id = ? "
                                   "ORDER BY pair_index, half", (tid,))
        return [MatchRow.of(row) for row in rows]

    def match_by_id(self, tid: int, match_id: str) -> MatchRow | None:
        """One match by its id (``p00012h1``)."""
        row = self.db.execute(f"SELECT {_MATCH_COLUMNS} FROM matches WHERE tournament_id = ? AND match_id = ?",
                              (tid, match_id)).fetchone()
        return None if row is None else MatchRow.of(row)

    def latest_matches(self, tid: int, limit: int, entrants: Collection[int] | None = None) -> list[MatchRow]:
        """The ``limit`` matches stored last, newest first; only those ``entrants`` played in, if given."""
        sql, args = f"SELECT {_MATCH_COLUMNS} FROM matches WHERE tournament_id = ?", [tid]
        if entrants is not None:
            marks = ",".join("?" * len(entrants))
            sql += f" AND (seat0 IN ({marks}) OR seat1 IN ({marks}))"
            args += [*entrants, *entrants]
        return [MatchRow.of(row) for row in self.db.execute(sql + " ORDER BY id DESC LIMIT ?", (*args, limit))]

    def hands(self, match_row: int) -> list[HandRow]:
        """A match's hands in order."""
        rows = self.db.execute(f"SELECT {_HAND_COLUMNS} FROM hands WHERE match_row = ? ORDER BY hand_index",
                               (match_row,))
        return [HandRow(*row) for row in rows]

    def all_hands(self, tid: int) -> Iterator[HandRow]:
        """Every stored hand of the tournament, in schedule order (``match_row`` is its match's ``id``)."""
        columns = ", ".join(f"h.{name}" for name in _HAND_NAMES)
        rows = self.db.execute(f"SELECT {columns} FROM hands h JOIN matches m ON m.id = h.match_row "
                               "WHERE m.tournament_id = ? ORDER BY m.pair_index, m.half, h.hand_index", (tid,))
        return (HandRow(*row) for row in rows)

    def seating_hands(self, tid: int) -> list[SeatingHands]:
        """The stored hands counted per seating (the entrants on seats 0 and 1), with the game points
        each seat won in them: what the leaderboard needs of the hands, summed by SQLite."""
        rows = self.db.execute(
            "SELECT m.seat0, m.seat1, COUNT(*), SUM(CASE h.winner_seat WHEN 0 THEN h.game_points ELSE 0 END), "
            "SUM(CASE h.winner_seat WHEN 1 THEN h.game_points ELSE 0 END) FROM hands h "
            "JOIN matches m ON m.id = h.match_row WHERE m.tournament_id = ? GROUP BY m.seat0, m.seat1", (tid,))
        return [SeatingHands(*row) for row in rows]

    def faults(self, tid: int, match_row: int | None = None) -> list[FaultRow]:
        """Every fault in schedule order; only those of match ``match_row`` (its ``MatchRow.id``) with it."""
        where, args = ("AND m.id = ?", (tid, match_row)) if match_row is not None else ("", (tid,))
        rows = self.db.execute(
            "SELECT f.id, f.match_row, m.match_id, f.seat, f.entrant, f.kind, f.detail, f.fault_json FROM faults f "
            f"JOIN matches m ON m.id = f.match_row WHERE m.tournament_id = ? {where} "
            "ORDER BY m.pair_index, m.half, f.id", args)
        return [FaultRow.of(row) for row in rows]

    def fault_counts(self, tid: int) -> dict[int, int]:
        """Faults charged to each entrant (harness faults charge nobody), counted without reading
        the records: one malformed record cannot stop a leaderboard."""
        rows = self.db.execute(
            "SELECT f.entrant, COUNT(*) FROM faults f JOIN matches m ON m.id = f.match_row "
            "WHERE m.tournament_id = ? AND f.entrant IS NOT NULL AND f.kind != 'harness' GROUP BY f.entrant", (tid,))
        return {entrant: count for entrant, count in rows}

    def think_times(self, tid: int) -> list[ThinkRow]:
        """Per match and seat, the decisions' wall and CPU times."""
        rows = self.db.execute("SELECT t.match_row, t.seat, t.entrant, t.times_ms_json, t.cpu_ms_json "
                               "FROM think_times t JOIN matches m ON m.id = t.match_row WHERE m.tournament_id = ?",
                               (tid,))
        return [ThinkRow(match_row, seat, entrant, tuple(orjson.loads(wall)),
                         None if cpu is None else tuple(orjson.loads(cpu)))
                for match_row, seat, entrant, wall, cpu in rows]

    def snapshots(self, tid: int) -> list[SnapshotRow]:
        """Rating snapshots in schedule order (then by entrant)."""
        rows = self.db.execute("SELECT after_pair, entrant, mu, sigma FROM rating_snapshots WHERE tournament_id = ? "
                               "ORDER BY after_pair, entrant", (tid,))
        return [SnapshotRow(*row) for row in rows]

    # ------------------------------------------------------------------ writes

    def record_pair(self, tid: int, pair_index: int, outcomes: Sequence[MatchOutcome],
                    seats: Sequence[tuple[int, int]], attempts: int = 1) -> None:
        """Store one finished pair: both halves with their hands, faults and think times, atomically.

        ``seats[half]`` are the entrants on seats 0 and 1 of that half. Inside a caller's
        ``transaction()`` it commits with whatever else the caller writes there (the rating
        snapshots the pair unlocks: ``record_snapshots``).
        """
        with self.transaction() as db:
            done = db.execute("SELECT finished_at FROM pairs WHERE tournament_id = ? AND pair_index = ?",
                              (tid, pair_index)).fetchone()
            if done is None:
                raise StoreError(f"pair {pair_index} is not in the schedule of tournament {tid}")
            if done[0] is not None:
                raise StoreError(f"pair {pair_index} is already stored")
            for half, (outcome, (seat0, seat1)) in enumerate(zip(outcomes, seats)):
                self._insert_match(db, tid, pair_index, half, outcome, (seat0, seat1))
            db.execute("UPDATE pairs SET finished_at = ?, attempts = ? WHERE tournament_id = ? AND pair_index = ?",
                       (_now(), attempts, tid, pair_index))

    def record_snapshots(self, tid: int, snapshots: list[tuple[int, dict[int, tuple[float, float]]]]) -> None:
        """Store rating snapshots: ``(after_pair, {entrant: (mu, sigma)})`` each."""
        with self.transaction() as db:
            for after_pair, ratings in snapshots:
                db.executemany(
                    "INSERT INTO rating_snapshots (tournament_id, after_pair, entrant, mu, sigma) VALUES (?, ?, ?, ?, ?)",
                    [(tid, after_pair, entrant, mu, sigma) for entrant, (mu, sigma) in sorted(ratings.items())],
                )

    def _insert_match(self, db: sqlite3.Connection, tid: int, pair_index: int, half: int,
                      outcome: MatchOutcome, seats: tuple[int, int]) -> None:
        interrupted = outcome.interrupted
        row = db.execute(
            "INSERT INTO matches (tournament_id, pair_index, half, match_id, seed, seat0, seat1, winner_seat, "
            "score0, score1, forfeit, void, hands, interrupted_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (tid, pair_index, half, outcome.match_id, str(outcome.seed), seats[0], seats[1], outcome.winner,
             outcome.score[0], outcome.score[1], int(outcome.forfeit), int(outcome.void),
             len(outcome.results), None if interrupted is None else _engine_json(interrupted.to_dict())),
        ).lastrowid
        db.executemany(
            "INSERT INTO hands (match_row, hand_index, winner_seat, game_points, reason, total0, total1, tricks0, "
            "tricks1, record_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (row, i, r.winner, r.game_points, str(r.reason), r.totals[0], r.totals[1],
                 r.tricks[0], r.tricks[1], _engine_json(record.to_dict()))
                for i, (r, record) in enumerate(zip(outcome.results, outcome.records))
            ],
        )
        db.executemany(
            "INSERT INTO faults (match_row, seat, entrant, kind, detail, fault_json) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (row, f.seat, None if f.seat is None else seats[f.seat], str(f.kind), f.detail,
                 json.dumps(f.to_dict()))
                for f in outcome.faults
            ],
        )
        by_seat: dict[int, list[Think]] = {0: [], 1: []}
        for think in outcome.think_ms:
            by_seat[think.seat].append(think)  # KeyError for a seat no match has: nothing of the pair is stored
        db.executemany(
            "INSERT INTO think_times (match_row, seat, entrant, times_ms_json, cpu_ms_json) VALUES (?, ?, ?, ?, ?)",
            [(row, seat, seats[seat], *_think_json(thinks)) for seat, thinks in by_seat.items()],
        )

    def withdraw(self, tid: int, entrant: int, reason: str) -> None:
        """Mark an entrant withdrawn: its remaining pairs are refused (stored void), for ``reason``."""
        with self.transaction() as db:
            db.execute("UPDATE entrants SET withdrawn = ? WHERE tournament_id = ? AND entrant = ?",
                       (reason, tid, entrant))

    def finish_tournament(self, tid: int) -> None:
        """Mark the tournament finished (every pair stored)."""
        with self.transaction() as db:
            db.execute("UPDATE tournaments SET finished_at = ? WHERE id = ?", (_now(), tid))
