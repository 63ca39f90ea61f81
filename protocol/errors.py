"""The protocol layer's one error class."""

from __future__ import annotations

# ProtocolError.code values: each is the fault kind (protocol/PROTOCOL.md section 9) the referee records.
MALFORMED = "malformed"  # not JSON, not an object, or a field of the wrong shape
PROTOCOL = "protocol"  # wrong major version, wrong direction, or a message out of turn
DISCONNECT = "disconnect"  # over the size cap: the arena's socket resets such a link

ERROR_CODES = (MALFORMED, PROTOCOL, DISCONNECT)

# Reasons a `reject` may carry (PROTOCOL.md, "reject").
REJECT_REASONS = ("version_mismatch", "bad_token", "malformed", "protocol")


class ProtocolError(Exception):
    """Bytes that are not a valid message for this side of the link.

    ``code`` is stable and is the fault kind to record: ``"malformed"``, ``"protocol"`` or
    ``"disconnect"``. ``reason`` is the `reject` reason to answer a bad `hello` with:
    ``"malformed"``, ``"protocol"`` or ``"version_mismatch"``.
    """

    def __init__(self, code: str, message: str, *, reason: str | None = None) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown ProtocolError code {code!r}")
        super().__init__(message)
        self.code = code
        self.reason = reason if reason is not None else (code if code in REJECT_REASONS else PROTOCOL)

    def __repr__(self) -> str:
        return f"ProtocolError({self.code!r}, {str(self)!r}, reason={self.reason!r})"
