"""The cyclic garbage collector paused while a command imports the library.

Importing the modules an ``arena run`` needs allocates some half a million objects, none of them
garbage, and every burst of allocations sets off a collection that walks everything imported
so far: about a tenth of the run's start-up CPU. ``paused_gc()`` turns the collector off for
a block of imports, then freezes what exists (``gc.freeze``: later collections skip it, in this
process and in the workers it forks, whose copy-on-write pages then stay shared) and turns it
back on.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic collection inside the block; what exists after it is frozen (``gc.freeze``)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
