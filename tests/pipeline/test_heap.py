"""heap: after a call the survivors leave the collector's sight; a reclaim pass finds cycles that died later."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref

import pytest
from modelplane.pipeline import arena
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


def test_a_server_tunes_its_heap_unless_the_environment_did() -> None:
    # In a process of its own: the settings are for the life of the process.
    code = ("from modelplane.pipeline import arena; "
            "print(arena.tune({'MALLOC_ARENA_MAX': '4'}), arena.tune({'GLIBC_TUNABLES': 'x'}), arena.tune({}))")
    env = {k: v for k, v in os.environ.items() if k not in arena.OPERATOR_ENV}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    # glibc (this machine's and the images' C library) accepts each setting
    assert out.stdout.split() == ["False", "False", "True"]
