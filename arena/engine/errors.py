"""The engine's errors."""

from __future__ import annotations


class IllegalAction(ValueError):
    """An action that is not legal in the current state; the state is left unchanged."""


class MalformedAction(IllegalAction):
    """A string that is not an action at all (``""``, ``"play"``, ``"draw now"``)."""
