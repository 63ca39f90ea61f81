"""The server's settings: fixed by ``arena server init`` and kept in the data folder's database."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from arena.errors import ArenaError

MiB = 1024 * 1024


class ServerError(ArenaError):
    """A server operation failed; the message says what and how to fix it."""

    code = "server"


@dataclass(frozen=True, slots=True)
class Quotas:
    """What one participant may upload."""

    submissions_per_day: int = 20
    archive_bytes: int = 5 * MiB
    unpacked_bytes: int = 20 * MiB
    files: int = 500

    def to_dict(self) -> dict[str, int]:
        """The JSON form."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Every setting of one competition server (``arena server init`` flags)."""

    quotas: Quotas = Quotas()
    profile: str = "default"
    time_limit_ms: int = 1000
    bank_ms: int = 10_000
    handshake_ms: int = 10_000
    sandbox: str = "auto"
    pair_floor: int = 2            # the ladder gives every pairing at least this many pairs first
    settle_pairs: int = 2          # pairs per pairing in each half of the settle round-robin
    rate_per_minute: int = 600     # requests per client (verified token, else address), refilled evenly
    rate_burst: int = 120
    login_per_minute: int = 10     # web logins per address
    session_hours: int = 24 * 7
    max_zip_ratio: int = 100       # a member may unpack to at most this many times its packed size

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in the database."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ServerConfig:
        """The inverse of ``to_dict``; unknown keys are refused, missing ones take defaults."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ServerError(f"unknown server setting {unknown[0]!r}")
        values = dict(data)
        if isinstance(values.get("quotas"), dict):
            values["quotas"] = Quotas(**values["quotas"])
        return cls(**values)
