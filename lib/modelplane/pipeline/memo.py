"""A bounded, thread-safe cache of values by a digest of protobuf wire bytes.

Equal bytes are equal content, so a value worked out from one message serves
every later message with the same bytes (a map serialised in another order
only costs a miss). Least recently used out first.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


def digest(wire: bytes) -> bytes:
    return hashlib.blake2b(wire, digest_size=16).digest()


class DigestMemo(Generic[V]):
    def __init__(self, limit: int) -> None:
        self._values: OrderedDict[bytes, V] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, wire: bytes, make: Callable[[], V]) -> V:
        """The value for ``wire``; ``make`` works it out on a miss (outside the lock: two threads
        racing on one message both make it, which is harmless)."""
        key = digest(wire)
        with self._lock:
            hit = self._values.get(key)
            if hit is not None:
                self._values.move_to_end(key)
                self.hits += 1
                return hit
        value = make()
        with self._lock:
            self.misses += 1
            self._values[key] = value
            while len(self._values) > self._limit:
                self._values.popitem(last=False)
        return value
