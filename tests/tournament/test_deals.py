"""Secret deals: key, pair seeds, commitment, storage and migration of older stores (unit)."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
import stat
from pathlib import Path

import pytest

from arena.engine.deals import DealMode, Deals, commitment, parse_key, secret_pair_seed
from arena.engine.records import Pair
from arena.schedule import new_key, schedule
from arena.tournament import ConfigError, TournamentConfig, BotEntry, config_from_dict
from results.store import APPLICATION_ID, MIGRATIONS, Store

from .stores import BOTS, SETTINGS

pytestmark = pytest.mark.unit


def test_a_pair_seed_is_the_first_16_bytes_of_hmac_sha256_of_the_key() -> None:
    key = bytes(range(32))
    digest = hmac.new(key, b"pair:7", hashlib.sha256).digest()
    assert secret_pair_seed(key, 7) == int.from_bytes(digest[:16], "big")
    assert Deals.secret(key).pair_seed(7) == secret_pair_seed(key, 7)
    assert Deals.secret(key).commitment == hashlib.sha256(key).hexdigest() == commitment(key)
    seeds = [p.seed for p in schedule(4, "round_robin", 3, Deals.secret(key))]
    assert len(set(seeds)) == 18 and max(seeds) >= 2**100  # 128-bit seeds, one per pair


def test_keys_are_fresh_and_never_printed() -> None:
    a, b = new_key(), new_key()
    assert len(a) == len(b) == 32 and a != b
    deals = Deals.secret(a)
    assert a.hex() not in repr(deals) and str(a) not in repr(deals)
    assert Deals.secret(a).pair_seed(0) != Deals.secret(b).pair_seed(0)
    assert Deals.public(3).commitment is None and Deals.public(3).mode is DealMode.PUBLIC
    with pytest.raises(ValueError, match="32 bytes"):
        Deals.secret(b"short")


@pytest.mark.parametrize("text", ["xyz", "00" * 31, "00" * 33, ""])
def test_a_bad_key_is_a_clear_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="64 hex digits"):
        parse_key(text)
    assert parse_key("ab" * 32) == b"\xab" * 32


def test_the_store_keeps_the_key_owner_only_and_128_bit_seeds_exactly(tmp_path: Path) -> None:
    key = new_key()
    deals = Deals.secret(key)
    pairs = [Pair(i, 0, 1, deals.pair_seed(i)) for i in range(3)]
    path = tmp_path / "a.sqlite"
    with Store(path, create=True) as store:
        tid = store.create_tournament("t", 1, SETTINGS, BOTS, pairs, deal_key=key)
    for part in (path, path.with_name("a.sqlite-wal")):
        if part.exists():
            assert stat.S_IMODE(part.stat().st_mode) == 0o600
    with Store(path, readonly=True) as store:
        assert [stored.pair for stored in store.pairs(tid)] == pairs
        assert store.deals(tid) == deals and store.deals(tid).key == key
        assert key.hex() not in repr(store.tournament())


def test_a_store_from_before_secret_deals_migrates_and_reads_as_public(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    for statement in MIGRATIONS[0]:
        raw.execute(statement)
    raw.execute("PRAGMA user_version = 1")
    raw.execute("INSERT INTO tournaments VALUES (1, 'old', 42, '{}', 'then', NULL)")
    raw.execute("INSERT INTO pairs VALUES (1, 0, 0, 1, 1234567890123, NULL, 0)")
    raw.execute("INSERT INTO matches (id, tournament_id, pair_index, half, match_id, seed, seat0, seat1, winner_seat, "
                "score0, score1, forfeit, void, hands) VALUES (1, 1, 0, 0, 'p00000h0', 1234567890123, 0, 1, 0, 7, 0, "
                "0, 0, 0)")
    raw.commit()
    raw.close()
    with Store(path) as store:
        assert store.pairs(1)[0].pair.seed == 1234567890123 and store.matches(1)[0].seed == 1234567890123
        assert store.deals(1) == Deals.public(42)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def test_deals_in_the_tournament_file(tmp_path: Path) -> None:
    base = {"bots": ["a", "b"]}
    assert config_from_dict(base, where="t.toml", base=tmp_path).deals is DealMode.SECRET
    assert config_from_dict({**base, "deals": "public"}, where="t.toml", base=tmp_path).deals is DealMode.PUBLIC
    with pytest.raises(ConfigError, match="'deals' must be one of 'secret', 'public'"):
        config_from_dict({**base, "deals": "open"}, where="t.toml", base=tmp_path)
    stored = TournamentConfig(bots=(BotEntry(Path("/a")), BotEntry(Path("/b")))).to_dict()
    assert TournamentConfig.from_dict(stored).deals is DealMode.SECRET
    del stored["deals"]  # a tournament stored before secret deals existed
    assert TournamentConfig.from_dict(stored).deals is DealMode.PUBLIC
