"""Python's cyclic garbage collector paused while a step makes millions of short-lived objects.

Extraction, linking, rendering and the site's search indexes all use it, so it sits at the
bottom of the package's layers."""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic collector off for the duration (also a decorator).

    Extraction and rendering allocate millions of short-lived objects (an
    ``ast`` tree, a page's fragments) that reference counting frees on its own;
    the collector still walks them, and everything older, every few hundred
    allocations: a fifth of a cold build's CPU.  Steps hold no cycles worth
    collecting mid-way, so it runs again once the step ends.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
