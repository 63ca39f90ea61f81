"""``results.verify`` on stores of real engine matches, untouched and tampered with (unit)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.engine.deals import Deals
from arena.schedule import new_key
from results.rows import hand_record
from results.store import Store
from results.verify import verify

from .stores import PAIRS, make_store

pytestmark = pytest.mark.unit

def tamper(path: Path, sql: str, *args: Any) -> None:
    with sqlite3.connect(path) as raw:
        assert raw.execute(sql, args).rowcount >= 1


def first_record(path: Path) -> dict[str, Any]:
    with sqlite3.connect(path) as raw:
        return json.loads(raw.execute("SELECT record_json FROM hands WHERE match_row = 1 AND hand_index = 0")
                          .fetchone()[0])


def problems(path: Path, key: bytes | None = None) -> list[str]:
    with Store(path, readonly=True) as store:
        return [p.describe() for p in verify(store, key).problems]


@pytest.fixture()
def secret(tmp_path: Path) -> tuple[Path, bytes]:
    key = new_key()
    return make_store(tmp_path / "s.sqlite", Deals.secret(key)), key


def test_an_untouched_tournament_verifies_with_and_without_its_key(secret: tuple[Path, bytes]) -> None:
    path, key = secret
    with Store(path, readonly=True) as store:
        plain, keyed = verify(store), verify(store, key)
    assert plain.problems == [] and keyed.problems == []
    assert plain.matches == keyed.matches == 2 * PAIRS and plain.hands == keyed.hands > 2 * PAIRS
    assert "stored seeds only" in plain.deals and "key matches the commitment" in keyed.deals


def test_a_store_in_the_old_text_form_reads_back_the_same_and_verifies(secret: tuple[Path, bytes]) -> None:
    """Stores written before orjson may hold hand records with spaces after the separators."""
    path, key = secret
    with Store(path, readonly=True) as store:
        tid = store.tournament().id
        hands = list(store.all_hands(tid))
    with sqlite3.connect(path) as raw:
        for match_row, index, text in raw.execute("SELECT match_row, hand_index, record_json FROM hands").fetchall():
            raw.execute("UPDATE hands SET record_json = ? WHERE match_row = ? AND hand_index = ?",
                        (json.dumps(json.loads(text)), match_row, index))
    with Store(path, readonly=True) as store:
        old_hands = list(store.all_hands(tid))
        assert verify(store).problems == [] and verify(store, key).problems == []
    assert all(", " in h.record_json for h in old_hands)  # the rows do hold the old form
    assert [hand_record(h.record_json) for h in old_hands] == [hand_record(h.record_json) for h in hands]


def test_a_wrong_key_fails(secret: tuple[Path, bytes]) -> None:
    path, _ = secret
    found = problems(path, new_key())
    assert len(found) == 1 and "wrong key" in found[0]


def test_a_tampered_deck_fails(secret: tuple[Path, bytes]) -> None:
    path, key = secret
    record = first_record(path)
    record["deck"][0], record["deck"][23] = record["deck"][23], record["deck"][0]
    tamper(path, "UPDATE hands SET record_json = ? WHERE match_row = 1 AND hand_index = 0", json.dumps(record))
    for found in (problems(path), problems(path, key)):
        assert found == ["p00000h0 hand 1: the deck is not the one the match seed derives"]


def test_a_tampered_hand_result_fails(secret: tuple[Path, bytes]) -> None:
    path, _ = secret
    tamper(path, "UPDATE hands SET game_points = game_points + 1 WHERE match_row = 3 AND hand_index = 1")
    found = problems(path)
    assert len(found) == 1 and found[0].startswith("p00001h0 hand 2: stored HandResult(")


def test_a_tampered_score_and_winner_fail(secret: tuple[Path, bytes]) -> None:
    path, _ = secret
    tamper(path, "UPDATE matches SET score0 = score0 + 1 WHERE id = 2")
    tamper(path, "UPDATE matches SET winner_seat = 1 - winner_seat WHERE id = 4")
    found = problems(path)
    assert len(found) == 2
    assert found[0].startswith("p00000h1: stored score") and found[1].startswith("p00001h1: stored winner seat")


def test_a_tampered_dealer_fails_on_any_hand(secret: tuple[Path, bytes]) -> None:
    path, _ = secret
    with sqlite3.connect(path) as raw:
        rows = raw.execute("SELECT match_row, hand_index, record_json FROM hands WHERE hand_index > 0").fetchall()
    match_row, index, text = rows[0]
    record = json.loads(text)
    record["dealer"] = 1 - record["dealer"]
    tamper(path, "UPDATE hands SET record_json = ? WHERE match_row = ? AND hand_index = ?", json.dumps(record),
           match_row, index)
    found = problems(path)
    assert len(found) == 1 and f"hand {index + 1}: dealer {record['dealer']} stored, the match flow gives" in found[0]


def test_an_illegal_action_in_a_record_fails(secret: tuple[Path, bytes]) -> None:
    path, _ = secret
    record = first_record(path)
    record["actions"][-1] = "play XX"
    tamper(path, "UPDATE hands SET record_json = ? WHERE match_row = 1 AND hand_index = 0", json.dumps(record))
    found = problems(path)
    assert found and "does not replay" in found[0]


@pytest.mark.parametrize("text", ["[]", '{"rules": {}, "deck": "AC", "dealer": 0, "actions": []}', "{"])
def test_a_malformed_record_fails_and_stops_that_match_only(secret: tuple[Path, bytes], text: str) -> None:
    path, _ = secret
    tamper(path, "UPDATE hands SET record_json = ? WHERE match_row = 1 AND hand_index = 0", text)
    found = problems(path)
    assert len(found) == 1 and found[0].startswith("p00000h0 hand 1: the hand record is malformed: ")


def test_deals_swapped_consistently_pass_without_the_key_and_fail_with_it(tmp_path: Path) -> None:
    """An organiser who replaced one pair's deal with one of their choosing, and stored it all
    consistently, is caught only by the key: this is what the commitment is for."""
    key = new_key()
    honest = Deals.secret(key)
    seeds = [honest.pair_seed(i) for i in range(PAIRS)]
    seeds[1] = 12345
    path = make_store(tmp_path / "swapped.sqlite", honest, seeds)
    assert problems(path) == []
    assert problems(path, key) == ["pair 1: the stored seed is not the one the deal source derives",
                                   "p00001h0 hand 1: the deck is not the one the match seed derives",
                                   "p00001h1 hand 1: the deck is not the one the match seed derives"]


def test_public_deals_are_rederived_from_the_tournament_seed(tmp_path: Path) -> None:
    path = make_store(tmp_path / "p.sqlite", Deals.public(7))
    assert problems(path) == []
    with Store(path, readonly=True) as store:
        assert "tournament seed 7" in verify(store).deals
    found = problems(path, new_key())
    assert found == ["tournament: its deals are public: there is no key to check"]
    tamper(path, "UPDATE pairs SET seed = '99' WHERE pair_index = 2")
    assert problems(path) == ["pair 2: the stored seed is not the one the deal source derives",
                              "p00002h0: the match seed is not its pair's seed",
                              "p00002h1: the match seed is not its pair's seed"]


def test_a_tampered_verdict_seating_or_pair_fails(secret: tuple[Path, bytes]) -> None:
    """Edits that keep every hand replayable but change who won: entrants swapped on a match's
    seats, a match made void, a forfeit given to a seat no fault was charged to, a finished
    pair's half deleted. Each once verified with 0 mismatches while the leaderboard changed."""
    path, _ = secret
    tamper(path, "UPDATE matches SET seat0 = seat1, seat1 = seat0 WHERE id = 2")
    tamper(path, "UPDATE matches SET void = 1, winner_seat = NULL WHERE id = 3")
    tamper(path, "UPDATE matches SET forfeit = 1 WHERE id = 4")
    for table in ("hands", "think_times"):
        tamper(path, f"DELETE FROM {table} WHERE match_row = 6")
    tamper(path, "DELETE FROM matches WHERE id = 6")
    found = problems(path)
    assert any(p.startswith("p00000h1: entrants (0, 1) on the seats, the pair's half gives (1, 0)") for p in found)
    assert any(p.startswith("p00001h0: void, without a harness fault") for p in found)
    assert any(p.startswith("p00001h1: a forfeit won by seat") and "was charged no fault" in p for p in found)
    assert "pair 2: finished, with halves [0] stored" in found, found
