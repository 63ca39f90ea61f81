"""The results layer's error base class."""

from __future__ import annotations


class StoreError(Exception):
    """A results store that cannot be opened, read or written; ``code`` is stable."""

    code = "store"
