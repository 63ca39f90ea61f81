"""The arena layer's error base class (STYLE.md section 0: one small base per layer)."""

from __future__ import annotations


class ArenaError(Exception):
    """Base of every error the arena harness raises; ``code`` is stable and serialisable."""

    code: str = "arena"
