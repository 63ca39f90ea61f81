"""Pickling for the frozen records a worker sends the runner after every pair.

A slots dataclass pickles through ``dataclasses``' own state functions, which call
``dataclasses.fields`` for every object, in Python: about half a worker's pickling time. A
class decorated with ``by_fields`` pickles as its constructor and its field values, read in C
(``operator.attrgetter``).
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, TypeVar

T = TypeVar("T")


def by_fields(cls: type[T]) -> type[T]:
    """Pickle the dataclass ``cls`` as ``cls(*field values)`` (its ``__init__`` checks run again)."""
    names = [field.name for field in dataclasses.fields(cls)]  # type: ignore[arg-type]
    if len(names) < 2:  # attrgetter of one name gives the value, not a tuple of values
        raise TypeError(f"by_fields: {cls.__name__} has {len(names)} field(s); it needs two or more")
    values = operator.attrgetter(*names)

    def reduce(self: Any) -> tuple[Any, tuple[Any, ...]]:
        return cls, values(self)

    setattr(cls, "__reduce__", reduce)
    return cls
