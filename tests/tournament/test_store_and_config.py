"""The results store's guards and the tournament file's checks (unit)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.tournament import ConfigError, load_config
from results.errors import StoreError
from results.store import APPLICATION_ID, Store

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
BOTS = [dict(name="x", version="1", fingerprint="f", path="/x", label="x"),
        dict(name="y", version="1", fingerprint="g", path="/y", label="y")]


def _outcome(match_id: str, winner: int) -> dict:
    return {"match_id": match_id, "seed": 5, "winner": winner, "score": [7, 0] if winner == 0 else [0, 7],
            "forfeit": False, "void": False, "results": [], "records": [], "faults": [], "think_ms": [[0, 0, 1.5]],
            "interrupted": None}


def test_a_new_store_is_marked_and_migrated(tmp_path: Path) -> None:
    with Store(tmp_path / "a.sqlite", create=True) as store:
        assert not store.has_tournament()
        tid = store.create_tournament("t", 1, {}, BOTS, [(0, 0, 1, 99)])
        assert store.tournament()["name"] == "t" and store.finished_pairs(tid) == set()
    raw = sqlite3.connect(tmp_path / "a.sqlite")
    assert raw.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_pair_is_stored_once_and_atomically(tmp_path: Path) -> None:
    with Store(tmp_path / "a.sqlite", create=True) as store:
        tid = store.create_tournament("t", 1, {}, BOTS, [(0, 0, 1, 99), (1, 0, 1, 98)])
        broken = _outcome("p00000h1", 1)
        del broken["think_ms"]
        with pytest.raises(KeyError):
            store.record_pair(tid, 0, [_outcome("p00000h0", 0), broken], [(0, 1), (1, 0)], [])
        assert store.matches(tid) == [] and store.finished_pairs(tid) == set()  # rolled back whole
        store.record_pair(tid, 0, [_outcome("p00000h0", 0), _outcome("p00000h1", 1)], [(0, 1), (1, 0)],
                          [(0, {0: (26.0, 8.0), 1: (24.0, 8.0)})])
        with pytest.raises(StoreError, match="already stored"):
            store.record_pair(tid, 0, [_outcome("p00000h0", 0), _outcome("p00000h1", 1)], [(0, 1), (1, 0)], [])
        with pytest.raises(StoreError, match="not in the schedule"):
            store.record_pair(tid, 7, [], [], [])
        assert len(store.matches(tid)) == 2 and store.finished_pairs(tid) == {0}
        assert [r["after_pair"] for r in store.snapshots(tid)] == [0, 0]


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


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_tournament_file_resolves_paths_against_its_folder(tmp_path: Path) -> None:
    path = _write(tmp_path, f'''
name = "cup"
format = "gauntlet"
pairs_per_pairing = 3
seed = 11
output = "out"
[rules]
profile = "santase"
match_target = 5
[time_control]
time_limit_ms = 200
[[bots]]
path = "{ROOT / 'bots/random'}"
name = "r1"
[[bots]]
path = "../{tmp_path.name}/rel"
''')
    config = load_config(path)
    assert config.output == tmp_path / "out" and config.bots[1].path == tmp_path / "rel"
    assert config.rules.match_target == 5 and config.rules.auto_declare  # santase plus an override
    assert config.time_control.time_limit_ms == 200 and config.time_control.bank_ms == 10_000
    assert config.bots[0].label == "r1" and config.pairs_per_pairing == 3 and str(config.format) == "gauntlet"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = ", "not valid TOML"),
        ("bots = []", "at least two"),
        ('colour = "red"\nbots = ["a", "b"]', "unknown key 'colour'"),
        ('format = "swiss"\nbots = ["a", "b"]', "'format' must be one of"),
        ('pairs_per_pairing = 0\nbots = ["a", "b"]', "'pairs_per_pairing' must be a positive integer"),
        ('seed = "x"\nbots = ["a", "b"]', "'seed' must be an integer"),
        ('bots = ["a", "b"]\n[rules]\nmust_head = 3', "must_head"),
        ('bots = ["a", "b"]\n[time_control]\nlimit = 3', "unknown key 'limit'"),
        ('bots = [{path = "a", colour = 1}, "b"]', "bots[0]: unknown key 'colour'"),
    ],
)
def test_bad_tournament_files_get_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")) as info:
        load_config(_write(tmp_path, text))
    assert str(tmp_path / "t.toml") in str(info.value)


def test_unreadable_tournament_files(tmp_path: Path) -> None:
    binary = tmp_path / "t.toml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(binary)
    with pytest.raises(ConfigError, match="no such tournament file"):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path)
