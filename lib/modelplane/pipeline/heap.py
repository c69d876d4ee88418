"""Keep the cyclic garbage collector's full passes off the server's calls.

A server keeps what it read of the fleet (``deployment.clusters``: hundreds of
thousands of small objects at 10,000 clusters) for as long as the fleet does
not change. CPython's collector walks every tracked object on each full
(generation 2) pass, so every few dozen calls one call paid for walking the
whole cache: 110-125 ms at 1,000 clusters, where a call costs 5, which is
the p99 of a loaded server. Those objects are not garbage, and they hold no
cycles (frozen dataclasses, tuples, strings): when they go, reference counting
frees them. So after each call the young generations are collected and
everything that survived is moved out of the collector's sight
(``gc.freeze``). Cycles that became garbage after they were frozen are not
found until the next reclaim, which unfreezes and runs one full pass every
``RECLAIM_SECONDS``: the server holds at most that much cyclic garbage more.
"""
from __future__ import annotations

import gc
import threading
import time

RECLAIM_SECONDS = 300.0


class Heap:
    def __init__(self, reclaim_seconds: float = RECLAIM_SECONDS, clock=time.monotonic) -> None:
        self._reclaim = reclaim_seconds
        self._clock = clock
        self._last = clock()
        self._lock = threading.Lock()

    def settle(self) -> None:
        """After a call: collect the young generations and freeze what survived; once every
        ``reclaim_seconds``, a full pass over everything first. Calls finishing at once settle once."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            now = self._clock()
            if now - self._last >= self._reclaim:
                self._last = now
                gc.unfreeze()
                gc.collect()
            else:
                gc.collect(1)
            gc.freeze()
        finally:
            self._lock.release()
