"""Bearer tokens: made from ``secrets``, stored only as scrypt hashes, compared in constant time.

A token reads ``s66_<id>_<secret>``: the id (16 hex digits) finds the account's row, the secret
(43 url-safe characters, 256 bits) is checked against ``scrypt(secret, salt)``. The database
never holds a token, so a stolen copy of it lets no one in.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

PREFIX = "s66"
_SHAPE = re.compile(r"s66_([0-9a-f]{16})_([A-Za-z0-9_-]{43})\Z")
# scrypt cost: ~16 MiB and some tens of milliseconds per check; verified tokens are cached.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
_DUMMY_SALT = b"\0" * 16


@dataclass(frozen=True, slots=True)
class HashedToken:
    """What the database keeps of a token."""

    token_id: str
    salt: bytes
    digest: bytes


def _scrypt(secret: str, salt: bytes) -> bytes:
    return hashlib.scrypt(secret.encode("ascii"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32)


def new_token() -> tuple[str, HashedToken]:
    """A fresh token (shown once) and the hash to store."""
    token_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_bytes(16)
    return f"{PREFIX}_{token_id}_{secret}", HashedToken(token_id, salt, _scrypt(secret, salt))


def token_id(token: str) -> str | None:
    """The id part of a well-formed token, None for anything else."""
    match = _SHAPE.match(token)
    return match.group(1) if match else None


def matches(token: str, stored: HashedToken | None) -> bool:
    """Whether ``token`` is the one ``stored`` was made from (constant time in the secret).

    A token not of the issued shape is refused at once, without scrypt (the shape is no
    secret, and scrypt for every junk string would let anyone burn the server's CPU). For a
    well-formed token with ``stored`` None (no such id) a dummy hash is still computed, so a
    wrong id costs the same time as a wrong secret.
    """
    match = _SHAPE.match(token)
    if match is None:
        return False
    digest = _scrypt(match.group(2), stored.salt if stored else _DUMMY_SALT)
    if stored is None or match.group(1) != stored.token_id:
        return False
    return hmac.compare_digest(digest, stored.digest)


def bearer(header: str) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` value, None for any other value."""
    scheme, _, token = header.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def fingerprint(token: str) -> str:
    """A fast one-way name for a token (the key of the verified-token cache and of sessions)."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()
