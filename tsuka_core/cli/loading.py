"""A command's loading phase: imports, plugins, the suite, with the cyclic garbage collector paused."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a command loads, then freeze what was loaded.

    Loading makes a few hundred thousand objects (modules, classes, pydantic's
    validators, the suite) that live as long as the process: the collector
    would walk them again and again while they are made, and at every
    collection of the run that follows. Paused, then moved out of its reach
    with :func:`gc.freeze`, they cost nothing more: a quarter to a third less
    CPU for a whole 200-test run (``docs/performance.md``). Garbage made meanwhile without a
    cycle is freed as usual; the collector is as it was once the block ends,
    even when loading fails.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
