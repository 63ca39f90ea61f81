"""Where a tournament's deals come from: a secret key (the default) or a public seed.

Pure computation over a key or a seed (the harness draws the key: ``arena.schedule.new_key``).

Secret deals: the tournament draws a 32-byte key from ``os.urandom`` and keeps it in its own
store only. The seed of pair ``i`` is the first 16 bytes of ``HMAC-SHA256(key, "pair:i")`` as a
big-endian integer, so neither a game id nor any public setting predicts a deal. The key's
SHA-256 (the *commitment*) is published from the start; once the tournament is over, the key
is revealed and anyone can re-derive every deck from it and check it against the commitment.

Public deals (a development choice): pair seeds derive from the tournament seed, so anyone
who knows or guesses it knows every deal in advance.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from enum import StrEnum

KEY_BYTES = 32
SEED_BYTES = 16


class DealMode(StrEnum):
    """How pair seeds are made."""

    SECRET = "secret"
    PUBLIC = "public"


def commitment(key: bytes) -> str:
    """What is published before the deals are played: ``sha256(key).hexdigest()``."""
    return hashlib.sha256(key).hexdigest()


def secret_pair_seed(key: bytes, pair_index: int) -> int:
    """Pair ``pair_index``'s match seed under secret deals."""
    digest = hmac.new(key, f"pair:{pair_index}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:SEED_BYTES], "big")


def derive_seed(tournament_seed: int, *labels: object) -> int:
    """A 63-bit seed derived from a public tournament seed and labels (stable across machines)."""
    text = ":".join([str(tournament_seed), *map(str, labels)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def parse_key(text: str) -> bytes:
    """A key given in hex (``arena verify --key``); ValueError if it is not 32 bytes of hex."""
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        raise ValueError(f"a deal key is {2 * KEY_BYTES} hex digits, got {text!r}") from None
    if len(key) != KEY_BYTES:
        raise ValueError(f"a deal key is {2 * KEY_BYTES} hex digits, got {2 * len(key)}")
    return key


@dataclass(frozen=True, slots=True)
class Deals:
    """The deal source of one tournament: ``key`` under secret deals, ``seed`` under public ones."""

    mode: DealMode
    seed: int = 0
    key: bytes | None = field(default=None, repr=False)  # never in a log line or a traceback

    @classmethod
    def secret(cls, key: bytes) -> Deals:
        """Secret deals from ``key``."""
        if len(key) != KEY_BYTES:
            raise ValueError(f"a deal key has {KEY_BYTES} bytes, got {len(key)}")
        return cls(DealMode.SECRET, key=key)

    @classmethod
    def public(cls, seed: int) -> Deals:
        """Public, predictable deals from the tournament seed."""
        return cls(DealMode.PUBLIC, seed=seed)

    def pair_seed(self, pair_index: int) -> int:
        """The match seed of pair ``pair_index`` (both halves play it)."""
        if self.key is not None:
            return secret_pair_seed(self.key, pair_index)
        return derive_seed(self.seed, "pair", pair_index)

    @property
    def commitment(self) -> str | None:
        """The published SHA-256 of the key (None for public deals)."""
        return None if self.key is None else commitment(self.key)
