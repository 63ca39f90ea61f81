"""A run's progress bar: tqdm's when it is shown, else a stand-in that shows nothing.

A run without a bar (``--quiet``, or no terminal) then never imports tqdm, which with what it
imports (``importlib.metadata`` among them) is some 30 ms of every run's start-up. Log lines
for the terminal go through :func:`write`, above the bar when there is one.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol


class Bar(Protocol):
    """What the runner does with a progress bar (tqdm's names)."""

    def update(self, n: float = 1) -> Any: ...

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> Any: ...

    def close(self) -> Any: ...


class _Hidden:
    """A bar that shows nothing."""

    def update(self, n: float = 1) -> None:
        """Nothing to show."""

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Nothing to show."""

    def close(self) -> None:
        """Nothing to close."""


def progress_bar(total: int, *, show: bool | None, desc: str, unit: str) -> Bar:
    """A tqdm bar counting to ``total`` if ``show`` (None: if stderr is a terminal, as tqdm
    decides), else one that shows nothing."""
    if not (sys.stderr.isatty() if show is None else show):
        return _Hidden()
    from tqdm import tqdm

    bar: Bar = tqdm(total=total, unit=unit, desc=desc, dynamic_ncols=True)
    return bar


def write(line: str) -> None:
    """Write ``line`` to stderr, above the progress bar if one is shown."""
    tqdm_module = sys.modules.get("tqdm")
    if tqdm_module is None:  # no bar was ever made in this process: nothing to write around
        sys.stderr.write(line + "\n")  # one write: lines from two threads never interleave
    else:
        tqdm_module.tqdm.write(line, file=sys.stderr)
