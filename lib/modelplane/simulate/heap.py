"""Keep Python's cycle collector off the world a long simulation builds up.

A simulation holds tens of thousands of XRs, composed resources and cached
wire bytes for its whole run, and allocates fast while it renders. CPython's
collector walks every tracked object of a generation it collects, so each
collection of the oldest generation walks the whole world again: measured on a
1,000-cluster fleet, 8.6 s of the simulator's 49 s of CPU (16 full and 358
middle collections). Nearly all of that heap lives until the next wave
replaces it, and it holds no garbage cycles worth finding (plain dicts, lists
and bytes, freed by reference counting when replaced).

``collector_paused`` moves what is alive after each wave into the permanent
generation (``gc.freeze``), after a young collection so that no garbage cycle
of the wave is frozen with it; what a frozen object still frees by reference
counting is freed as usual. The collector then only walks what the current
wave allocated, and the oldest generation is collected far less often (what a
wave leaves alive is frozen at its end anyway: with the default threshold a
frozen heap, counted as nothing, made a wave of 2,000 renders collect its own
survivors again and again). On exit everything is unfrozen and the thresholds
are restored, so a caller's later collections see it all again. A caller that
froze objects itself keeps its own arrangement: nothing is done then.
"""
from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# Collections of the middle generation between two of the oldest (CPython's default: 10).
OLDEST_THRESHOLD = 1_000


def _settle() -> None:
    gc.collect(1)
    gc.freeze()


def _nothing() -> None:
    return None


@contextmanager
def collector_paused() -> Iterator[Callable[[], None]]:
    """A context whose value, called between waves, freezes what is alive (see the module)."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield _nothing
        return
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], max(thresholds[2], OLDEST_THRESHOLD))
    try:
        yield _settle
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
