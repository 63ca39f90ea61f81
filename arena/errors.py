"""The arena layer's error base class (one small base per layer: docs/architecture.md#layers)."""

from __future__ import annotations


class ArenaError(Exception):
    """Base of every error the arena harness raises; ``code`` is stable and serialisable."""

    code: str = "arena"
