"""heap: after a call the survivors leave the collector's sight; a reclaim pass finds cycles that died later."""
from __future__ import annotations

import gc
import weakref

import pytest
from modelplane.pipeline.heap import Heap


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


@pytest.fixture(autouse=True)
def _unfrozen():
    yield
    gc.unfreeze()


def test_survivors_are_frozen_and_a_reclaim_frees_cycles_that_died_since() -> None:
    now = [0.0]
    heap = Heap(reclaim_seconds=60, clock=lambda: now[0])
    kept = _Node()
    probe = weakref.ref(kept)
    heap.settle()
    assert gc.get_freeze_count() > 0                  # the cache-like survivor is out of the collector's sight
    del kept
    gc.collect()
    assert probe() is not None                        # a frozen cycle is not collected by a full pass...
    now[0] = 61.0
    heap.settle()                                     # ...until the reclaim
    assert probe() is None
    assert gc.get_freeze_count() > 0


def test_young_garbage_is_collected_before_freezing() -> None:
    heap = Heap(reclaim_seconds=60, clock=lambda: 0.0)
    gc.collect()
    dead = _Node()
    probe = weakref.ref(dead)
    del dead                                          # garbage of the call that just ended
    heap.settle()
    assert probe() is None                            # collected, not frozen


def test_calls_finishing_together_settle_once() -> None:
    heap = Heap(reclaim_seconds=60, clock=lambda: 0.0)
    heap._lock.acquire()                              # another thread is settling
    try:
        gc.unfreeze()
        heap.settle()
        assert gc.get_freeze_count() == 0             # this one did not wait, nor freeze
    finally:
        heap._lock.release()
