"""The results store: opening, guards, transactions, migrations (unit; disk full on a tmpfs)."""

from __future__ import annotations

import json
import random
import re
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.engine import HandResult, Reason, Rules
from arena.engine.deals import Deals
from arena.engine.records import (EntrantRecord, Fault, FaultKind, HandRecord, MatchOutcome, Pair, SprtSettings, Think,
                                  TournamentSettings)
from results.errors import StoreError
from results.rows import SeatingHands, StoredEntrant, hand_record
from results.store import APPLICATION_ID, MIGRATIONS, Store, _think_json
from tests.tournament.stores import BOTS, SETTINGS, make_store

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]

def _outcome(match_id: str, winner: int) -> MatchOutcome:
    return MatchOutcome(match_id=match_id, seed=5, names=("x", "y"), rules=Rules(), winner=winner,
                        score=(7, 0) if winner == 0 else (0, 7), forfeit=False, void=False,
                        think_ms=(Think(0, 0, 1.5),))


def _unwritable(outcome: MatchOutcome) -> MatchOutcome:
    """``outcome`` with a think time of a seat no match has: the store fails while writing it."""
    return replace(outcome, think_ms=(Think(2, 0, 1.0),))


def _padded(match_id: str, padding: str) -> MatchOutcome:
    """A match seat 0 won in one hand whose record carries ``padding`` (to fill the file)."""
    return replace(_outcome(match_id, 0), results=(HandResult(0, 3, Reason.DECLARED, (66, 0), (6, 0)),),
                   records=(HandRecord(Rules(), (), 0, (padding,)),))


def test_a_new_store_is_marked_and_migrated(tmp_path: Path) -> None:
    with Store(tmp_path / "a.sqlite", create=True) as store:
        assert not store.has_tournament()
        tid = store.create_tournament("t", 1, SETTINGS, BOTS, [Pair(0, 0, 1, 99)])
        assert store.tournament().name == "t" and store.finished_pairs(tid) == set()
    raw = sqlite3.connect(tmp_path / "a.sqlite")
    assert raw.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_entrants_are_stored_as_entered_and_a_growing_tournament_adds_them_once(tmp_path: Path) -> None:
    newcomer = EntrantRecord(name="z", version="2", fingerprint="h", path="/z", label="z v2")
    with Store(tmp_path / "a.sqlite", create=True) as store:
        tid = store.create_tournament("t", 1, SETTINGS, BOTS, [])
        assert store.add_entrant(tid, newcomer) == 2
        assert store.add_entrant(tid, replace(newcomer, path="/elsewhere")) == 2  # same label: the one there
        assert store.entrants(tid) == [StoredEntrant(number, bot, None)
                                       for number, bot in enumerate([*BOTS, newcomer])]


def test_reads_in_a_read_transaction_see_one_state_while_a_writer_stores_a_pair(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    with Store(path, create=True) as writer, Store(path, readonly=True) as reader:
        tid = writer.create_tournament("t", 1, SETTINGS, BOTS, [Pair(0, 0, 1, 99), Pair(1, 0, 1, 98)])
        writer.record_pair(tid, 0, [_outcome("p00000h0", 0), _outcome("p00000h1", 1)], [(0, 1), (1, 0)])
        with reader.read_transaction():
            before = len(reader.matches(tid))
            writer.record_pair(tid, 1, [_outcome("p00001h0", 0), _outcome("p00001h1", 1)], [(0, 1), (1, 0)])
            assert (before, reader.finished_pairs(tid)) == (2, {0})  # the pair stored meanwhile: in neither
        assert (len(reader.matches(tid)), reader.finished_pairs(tid)) == (4, {0, 1})


def test_each_decision_keeps_its_cpu_time_beside_its_wall_time(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import results.store as store_module

    path = tmp_path / "a.sqlite"
    cpu_migration = len(MIGRATIONS) - 1
    monkeypatch.setattr(store_module, "MIGRATIONS", MIGRATIONS[:cpu_migration])
    with Store(path, create=True) as old:  # a store made before CPU times, with a pair in it
        tid = old.create_tournament("t", 1, SETTINGS, BOTS, [Pair(0, 0, 1, 99), Pair(1, 0, 1, 98)])
        old.db.execute("INSERT INTO matches (tournament_id, pair_index, half, match_id, seed, seat0, seat1, "
                       "winner_seat, score0, score1, forfeit, void, hands) VALUES (?, 1, 0, 'old', 5, 0, 1, 0, 7, 0, "
                       "0, 0, 0)", (tid,))
        row = old.db.execute("SELECT id FROM matches").fetchone()[0]
        old.db.execute("INSERT INTO think_times (match_row, seat, entrant, times_ms_json) VALUES (?, 0, 0, '[2.5, 4.0]')",
                       (row,))
    monkeypatch.setattr(store_module, "MIGRATIONS", MIGRATIONS)
    with Store(path) as store:
        measured = replace(_outcome("p00000h0", 0), think_ms=(Think(0, 0, 1.5, 0.25), Think(1, 0, 2.0), Think(0, 1, 3.0, 1.0)))
        unmeasured = _outcome("p00000h1", 1)  # an outcome without CPU times: wall times only
        store.record_pair(tid, 0, [measured, unmeasured], [(0, 1), (1, 0)])
        rows = sorted((list(r.wall_ms), None if r.cpu_ms is None else list(r.cpu_ms))
                      for r in store.think_times(tid))
    assert rows == sorted([([2.5, 4.0], None), ([1.5, 3.0], [0.25, 1.0]), ([2.0], [None]), ([1.5], [None]), ([], [])])


def test_think_times_are_stored_compact_rounded_to_the_microsecond(tmp_path: Path) -> None:
    thinks = (Think(0, 0, 1.23449, 0.0004), Think(1, 0, 2.0), Think(0, 1, 1e-5, None), Think(0, 1, 250.5, 12.0))
    with Store(tmp_path / "a.sqlite", create=True) as store:
        tid = store.create_tournament("t", 1, SETTINGS, BOTS, [Pair(0, 0, 1, 99)])
        store.record_pair(tid, 0, [replace(_outcome("p00000h0", 0), think_ms=thinks), _outcome("p00000h1", 1)],
                          [(0, 1), (1, 0)])
        stored = store.db.execute("SELECT seat, times_ms_json, cpu_ms_json FROM think_times WHERE match_row = 1 "
                                  "ORDER BY seat").fetchall()
    assert [tuple(row) for row in stored] == [(0, "[1.234,0.0,250.5]", "[0.0,null,12.0]"), (1, "[2.0]", "[null]")]


@given(st.lists(st.floats(min_value=0.0, max_value=1e7), max_size=20))
def test_think_times_are_kept_within_half_a_microsecond_at_most_three_decimals(times: list[float]) -> None:
    wall_json, cpu_json = _think_json([Think(0, 0, ms, ms / 2) for ms in times])
    for stored, measured in ((json.loads(wall_json), times), (json.loads(cpu_json), [ms / 2 for ms in times])):
        assert len(stored) == len(measured)
        for value, ms in zip(stored, measured):
            assert abs(value - ms) <= 0.0005 + 1e-12 * ms and value == round(value, 3)


# A finished hand's ``record_json`` and an interrupted one's ``interrupted_json`` exactly as the
# store wrote them before hand records were typed (``json.dumps`` of ``Hand.record()``).
OLD_RECORD_JSON = (
    '{"rules":{"match_target":11,"must_head":false},"deck":["KH","TH","JC","TD","9H","KS","AS","9S","KC","QC",'
    '"TS","QS","KD","QD","AC","TC","9C","JH","JS","9D","AH","JD","QH","AD"],"dealer":1,"actions":["close","declare"]}'
)
OLD_INTERRUPTED_JSON = (
    '{"rules": {"match_target": 11, "must_head": false}, "deck": ["TH", "QD", "TS", "QS", "AD", "9C", "TD", "JC", '
    '"KH", "9D", "9S", "AC", "KC", "AH", "KS", "JH", "AS", "JD", "9H", "QH", "TC", "QC", "JS", "KD"], "dealer": 1, '
    '"actions": ["play TH"]}'
)


def test_hand_records_in_the_old_stored_form_read_back_and_are_written_again_compact(tmp_path: Path) -> None:
    record, interrupted = hand_record(OLD_RECORD_JSON), hand_record(OLD_INTERRUPTED_JSON)
    assert record.rules == Rules(match_target=11, must_head=False) and record.dealer == 1
    assert record.actions == ("close", "declare") and interrupted.actions == ("play TH",)
    halves = [replace(_outcome(f"p00000h{half}", half), results=(HandResult(1, 2, Reason.DECLARED, (10, 70), (1, 3)),),
                      records=(record,), interrupted=interrupted) for half in (0, 1)]
    with Store(tmp_path / "a.sqlite", create=True) as store:
        tid = store.create_tournament("t", 1, SETTINGS, BOTS, [Pair(0, 0, 1, 99)])
        store.record_pair(tid, 0, halves, [(0, 1), (1, 0)])
        stored = store.db.execute("SELECT h.record_json, m.interrupted_json FROM hands h "
                                  "JOIN matches m ON m.id = h.match_row").fetchall()
    # A finished hand's record byte for byte as before; an interrupted one's without the spaces it had.
    compact = json.dumps(json.loads(OLD_INTERRUPTED_JSON), separators=(",", ":"))
    assert [tuple(row) for row in stored] == [(OLD_RECORD_JSON, compact)] * 2
    assert hand_record(compact) == interrupted


def test_pairs_and_hands_read_back_as_typed_rows(tmp_path: Path) -> None:
    schedule = [Pair(0, 0, 1, 99), Pair(1, 1, 0, 98)]
    won = HandResult(0, 3, Reason.DECLARED, (66, 0), (6, 0))
    halves = [replace(_outcome(f"p00000h{half}", 0), results=(won,), records=(hand_record(OLD_RECORD_JSON),))
              for half in (0, 1)]
    with Store(tmp_path / "a.sqlite", create=True) as store:
        tid = store.create_tournament("t", 1, SETTINGS, BOTS, schedule)
        store.record_pair(tid, 0, halves, [(0, 1), (1, 0)], attempts=2)
        first, second = store.pairs(tid)
        assert [first.pair, second.pair] == schedule and store.pairs(tid, 1) == [second]
        assert first.finished_at is not None and first.attempts == 2 and second.finished_at is None
        match, other_half = store.matches(tid, 0)
        (hand,) = store.hands(match.id)
        assert list(store.all_hands(tid)) == [hand, replace(hand, match_row=other_half.id)]
    assert (hand.match_row, hand.hand_index, hand.record_json) == (match.id, 0, OLD_RECORD_JSON)
    assert hand.result == won and replace(hand, reason="lucky").result is None  # a foreign reason: no result


def test_hands_are_summed_per_seating_with_each_seats_game_points(tmp_path: Path) -> None:
    record = hand_record(OLD_RECORD_JSON)
    won0, won1 = HandResult(0, 3, Reason.DECLARED, (66, 0), (6, 0)), HandResult(1, 2, Reason.DECLARED, (10, 70), (1, 3))
    tie = HandResult(None, 0, Reason.TIE, (65, 65), (6, 6))
    halves = [replace(_outcome("p00000h0", 0), results=(won0, tie, won0, won1), records=(record,) * 4),
              replace(_outcome("p00000h1", 1), results=(won1,), records=(record,))]
    with Store(tmp_path / "a.sqlite", create=True) as store:
        tid = store.create_tournament("t", 1, SETTINGS, BOTS, [Pair(0, 0, 1, 99), Pair(1, 0, 1, 98)])
        store.record_pair(tid, 0, halves, [(0, 1), (1, 0)])
        store.record_pair(tid, 1, [_outcome("p00001h0", 0), _outcome("p00001h1", 1)], [(0, 1), (1, 0)])  # no hands
        found = sorted(store.seating_hands(tid), key=lambda s: (s.seat0, s.seat1))
        assert found == [SeatingHands(0, 1, 4, 6, 2), SeatingHands(1, 0, 1, 0, 2)]


def test_faults_read_back_typed_with_their_record_as_stored(tmp_path: Path) -> None:
    late = Fault(FaultKind.TIMEOUT, 1, "y", "late", match_id="p00000h0", hand_index=2, elapsed_ms=12.5)
    void = Fault(FaultKind.HARNESS, None, "arena", "worker died", match_id="p00000h1")
    halves = [replace(_outcome("p00000h0", 0), faults=(late,)), replace(_outcome("p00000h1", 1), faults=(void,))]
    with Store(tmp_path / "a.sqlite", create=True) as store:
        tid = store.create_tournament("t", 1, SETTINGS, BOTS, [Pair(0, 0, 1, 99)])
        store.record_pair(tid, 0, halves, [(0, 1), (1, 0)])
        first, second = store.faults(tid)
        assert store.faults(tid, second.match_row) == [second]
        store.db.execute("UPDATE faults SET fault_json = '[1]' WHERE id = ?", (second.id,))
        with pytest.raises(StoreError, match=f"fault {second.id}: its record is not an object"):
            store.faults(tid)
        assert store.fault_counts(tid) == {1: 1}  # counted without the records; the harness charges nobody
    assert (first.match_id, first.seat, first.entrant, first.kind, first.detail) == ("p00000h0", 1, 1, "timeout", "late")
    assert first.record == late.to_dict() and first.hand_index == 2
    assert (second.seat, second.entrant, second.kind, second.hand_index) == (None, None, "harness", None)


@pytest.mark.parametrize("text, problem", [
    ("[1]", "is an object, not list"),
    ('{"rules": 3, "deck": [], "dealer": 0, "actions": []}', "rules are not an object"),
    ('{"rules": {"match_target": -1}, "deck": [], "dealer": 0, "actions": []}', "rule option 'match_target'"),
    ('{"rules": {}, "deck": [1], "dealer": 0, "actions": []}', "deck is not a list of cards"),
    ('{"rules": {}, "deck": [], "dealer": 2, "actions": []}', "dealer 2 is not a seat"),
    ('{"rules": {}, "deck": [], "dealer": true, "actions": []}', "dealer True is not a seat"),
    ('{"rules": {}, "deck": [], "dealer": 0}', "actions are not a list of strings"),
    ('{"rules": {}, "deck"', "Expecting ':' delimiter"),
])
def test_a_malformed_stored_hand_record_is_a_store_error_naming_the_problem(text: str, problem: str) -> None:
    with pytest.raises(StoreError, match=f"the hand record is malformed: .*{re.escape(problem)}"):
        hand_record(text)


@pytest.mark.parametrize("document, rules, sprt", [
    ({"ladder": True}, Rules(), None),  # the server's ladder, and stores from before a key existed
    ({"rules": {"match_target": 7}, "pairs_per_pairing": 9, "sprt": {"elo0": 0.0, "elo1": 5.0, "alpha": 0.05,
                                                                     "beta": 0.05}},
     Rules(match_target=7), SprtSettings()),
])
def test_a_tournament_reads_back_with_its_settings_typed(tmp_path: Path, document: dict[str, object], rules: Rules,
                                                         sprt: SprtSettings | None) -> None:
    with Store(tmp_path / "a.sqlite", create=True) as store:
        tid = store.create_tournament("t", 5, TournamentSettings.from_dict(document), BOTS, [])
        row = store.tournament()
    assert (row.id, row.name, row.seed, row.finished_at) == (tid, "t", 5, None) and row.created_at
    assert row.settings.document == document and row.settings.rules == rules and row.settings.sprt == sprt
    assert row.settings.pairs_per_pairing == document.get("pairs_per_pairing", 1)


@pytest.mark.parametrize("config_json", ['[]', '{"rules": {"match_target": "x"}}', '{"sprt": {"elo": 1}}', "{"])
def test_malformed_stored_settings_are_a_store_error(tmp_path: Path, config_json: str) -> None:
    path = tmp_path / "a.sqlite"
    with Store(path, create=True) as store:
        store.create_tournament("t", 5, SETTINGS, BOTS, [])
        store.db.execute("UPDATE tournaments SET config_json = ?", (config_json,))
        with pytest.raises(StoreError, match="the tournament's settings are malformed"):
            store.tournament()


def test_a_pair_is_stored_once_and_atomically(tmp_path: Path) -> None:
    with Store(tmp_path / "a.sqlite", create=True) as store:
        tid = store.create_tournament("t", 1, SETTINGS, BOTS, [Pair(0, 0, 1, 99), Pair(1, 0, 1, 98)])
        broken = _unwritable(_outcome("p00000h1", 1))
        with pytest.raises(KeyError):
            store.record_pair(tid, 0, [_outcome("p00000h0", 0), broken], [(0, 1), (1, 0)])
        assert store.matches(tid) == [] and store.finished_pairs(tid) == set()  # rolled back whole
        with store.transaction():
            store.record_pair(tid, 0, [_outcome("p00000h0", 0), _outcome("p00000h1", 1)], [(0, 1), (1, 0)])
            store.record_snapshots(tid, [(0, {0: (26.0, 8.0), 1: (24.0, 8.0)})])
        with pytest.raises(StoreError, match="already stored"):
            store.record_pair(tid, 0, [_outcome("p00000h0", 0), _outcome("p00000h1", 1)], [(0, 1), (1, 0)])
        with pytest.raises(StoreError, match="not in the schedule"):
            store.record_pair(tid, 7, [], [])
        assert len(store.matches(tid)) == 2 and store.finished_pairs(tid) == {0}
        assert [m.match_id for m in store.matches(tid, 0)] == ["p00000h0", "p00000h1"] == [
            m.match_id for m in store.matches(tid)]
        assert store.matches(tid, 1) == []
        assert [r.after_pair for r in store.snapshots(tid)] == [0, 0]


def test_foreign_and_corrupt_databases_are_refused_untouched(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.sqlite"
    raw = sqlite3.connect(foreign)
    raw.execute("CREATE TABLE notes (x)")
    raw.commit()
    raw.close()
    before = foreign.read_bytes()
    with pytest.raises(StoreError, match="not a Sixty-Six Arena results database"):
        Store(foreign, create=True)
    assert foreign.read_bytes() == before
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a Sixty-Six Arena results database"):
        Store(corrupt)
    with pytest.raises(StoreError, match="no results database"):
        Store(tmp_path / "missing.sqlite")
    with pytest.raises(StoreError, match="not a file"):
        Store(tmp_path)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    Store(path, create=True).close()
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version = 99")
    raw.commit()
    raw.close()
    with pytest.raises(StoreError, match="newer arena"):
        Store(path)


def test_an_empty_database_is_refused_and_left_empty(tmp_path: Path) -> None:
    empty = tmp_path / "arena.sqlite"
    empty.touch()
    for kwargs in ({"create": True}, {}, {"readonly": True}):
        with pytest.raises(StoreError, match=r"is empty \(0 bytes\)"):
            Store(empty, **kwargs)
    assert empty.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["arena.sqlite"]


def _filled(path: Path, pairs: int) -> None:
    with Store(path, create=True) as store:
        tid = store.create_tournament("t", 1, SETTINGS, BOTS, [Pair(i, 0, 1, i) for i in range(pairs)])
        for i in range(pairs):
            big = _padded(f"p{i:05d}h0", "x" * 3000)
            store.record_pair(tid, i, [big, _outcome(f"p{i:05d}h1", 1)], [(0, 1), (1, 0)])
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()


def test_a_damaged_database_is_refused_untouched_by_every_kind_of_open(tmp_path: Path) -> None:
    db = tmp_path / "arena.sqlite"
    _filled(db, 60)
    data = bytearray(db.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 8192] = b"\xa5" * 8192
    db.write_bytes(bytes(data))
    for kwargs in ({"create": True}, {}, {"readonly": True}):
        with pytest.raises(StoreError, match="damaged"):
            Store(db, **kwargs)
        assert db.read_bytes() == data


def test_damage_that_sqlite_describes_over_several_lines_is_refused_in_one_line(tmp_path: Path) -> None:
    db = make_store(tmp_path / "arena.sqlite", Deals.public(3))
    data = bytearray(db.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 8192] = random.Random(0).randbytes(8192)
    db.write_bytes(bytes(data))
    with sqlite3.connect(db) as raw:
        assert any("\n" in row[0] for row in raw.execute("PRAGMA quick_check(3)"))  # "*** in database main ***\n..."
    with pytest.raises(StoreError, match="damaged") as refused:
        Store(db, readonly=True)
    assert "\n" not in str(refused.value) and "On tree page" in str(refused.value)


def test_transactions_nest_with_savepoints(tmp_path: Path) -> None:
    with Store(tmp_path / "a.sqlite", create=True) as store:
        store.create_tournament("t", 1, SETTINGS, BOTS, [])
        with store.transaction() as db:
            db.execute("UPDATE tournaments SET name = 'outer'")
            with pytest.raises(ZeroDivisionError), store.transaction():
                db.execute("UPDATE tournaments SET name = 'inner'")
                1 / 0
            assert store.tournament().name == "outer"
            with store.transaction():
                db.execute("UPDATE tournaments SET seed = 5")
        assert not store.db.in_transaction
        assert (store.tournament().name, store.tournament().seed) == ("outer", 5)


def test_the_original_error_survives_a_transaction_sqlite_already_ended(tmp_path: Path) -> None:
    with Store(tmp_path / "a.sqlite", create=True) as store:
        with pytest.raises(LookupError, match="the real problem"), store.transaction() as db:
            db.execute("ROLLBACK")  # as SQLite itself does on some errors (e.g. a full disk)
            raise LookupError("the real problem")
        with store.transaction():  # the store is usable afterwards
            store.create_tournament("t", 1, SETTINGS, BOTS, [])
        assert store.has_tournament()


def test_a_failed_commit_is_rolled_back(tmp_path: Path) -> None:
    with Store(tmp_path / "a.sqlite", create=True) as store:
        with pytest.raises(StoreError, match="contradict each other"), store.transaction() as db:
            db.execute("PRAGMA defer_foreign_keys = ON")  # the violation shows only at COMMIT
            db.execute("INSERT INTO entrants (tournament_id, entrant, bot_id, label) VALUES (7, 0, 7, 'x')")
        assert not store.db.in_transaction
        store.create_tournament("t", 1, SETTINGS, BOTS, [])
        assert [e.bot.label for e in store.entrants(store.tournament().id)] == ["x", "y"]


def test_migrations_run_statement_by_statement_and_only_for_writers(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import results.store as store_module

    path = tmp_path / "a.sqlite"
    Store(path, create=True).close()
    newer = (*store_module.MIGRATIONS,
             ("CREATE TABLE notes (text TEXT NOT NULL DEFAULT 'a; b')", "INSERT INTO notes DEFAULT VALUES"))
    monkeypatch.setattr(store_module, "MIGRATIONS", newer)
    before = path.read_bytes()
    with pytest.raises(StoreError, match=f"uses results schema {len(newer) - 1}, this arena uses {len(newer)}; a writer must"):
        Store(path, readonly=True)
    assert path.read_bytes() == before
    with Store(path) as store:
        assert store.db.execute("SELECT text FROM notes").fetchall()[0][0] == "a; b"
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == len(newer)
    with Store(path, readonly=True) as store:
        assert store.db.execute("SELECT count(*) FROM notes").fetchone()[0] == 1


def test_a_full_disk_is_a_clear_error_and_keeps_what_was_stored(tmp_path: Path) -> None:
    from arena.sink import disk_full
    from results.store import DiskFullError
    from tests.tmpfs import mounted_tmpfs

    with mounted_tmpfs(tmp_path / "small", "1m") as disk:
        path = disk / "arena.sqlite"
        with Store(path, create=True) as store:
            tid = store.create_tournament("t", 1, SETTINGS, BOTS, [Pair(i, 0, 1, i) for i in range(1000)])
            stored = 0
            with pytest.raises(DiskFullError, match="disk is full") as info:
                for i in range(1000):
                    big = _padded(f"p{i:05d}h0", f"{i}" * 20_000)
                    store.record_pair(tid, i, [big, _outcome(f"p{i:05d}h1", 1)], [(0, 1), (1, 0)])
                    stored += 1
            assert str(path) in str(info.value) and "earlier results are intact" in str(info.value)
            assert disk_full(info.value)  # what the runner checks, knowing nothing of the store
            assert 0 < stored < 1000 and not store.db.in_transaction
            assert store.finished_pairs(tid) == set(range(stored))
        with Store(path, readonly=True) as again:  # the integrity check passes
            assert len(again.matches(tid)) == 2 * stored
