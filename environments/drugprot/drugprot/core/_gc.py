"""``gc_paused``: run a bulk build of acyclic records without CPython's cyclic garbage collector.

Loading the train split creates ~10^6 dicts, tuples and strings that all survive. Every 700 net allocations
CPython runs a collection, and the older generations re-walk everything alive, so the collector's cost
grows with what the process already holds (in a verifiers process, a lot). None of these records forms a
reference cycle, so pausing the collector frees nothing late: reference counting still frees every
temporary at once, and peak memory is unchanged. The collector is re-enabled on exit (also on error) only
if it was enabled on entry, so nested and caller-managed pauses compose.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic garbage collector for the block (or, as ``@gc_paused()``, for each call of the
    decorated function); restore its previous state afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
