"""Plain data of protobuf Structs, worked out once per their wire bytes.

A ModelDeployment's calls bring the same small objects again and again: its
XR, its observed children (twenty for ten replicas), every InferenceClass.
Each was converted to dicts on every call, and at 20 classes and 20
children that was about half of a composing call (2.2 of 5 ms at 1,000
clusters on a fleet of mixed clouds). Equal bytes are equal content, so the
first conversion of some bytes is kept as a pickle and every later one is
``pickle.loads`` of it: fresh dicts and lists a caller may change, built in
C, equal to what ``convert`` returns (same keys, same order, same values).

Least recently used out first, at most ``PLAIN_BYTES`` of pickles in all; an
object larger than a tenth of that is converted every time (a cluster list
entry is read otherwise: ``deployment.clusters``).
"""
from __future__ import annotations

import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable

from modelplane.pipeline.memo import Key, digest

PLAIN_BYTES = 16 << 20


class PlainMemo:
    """Pickled plain data by a digest of the wire bytes it was converted from. Thread-safe."""

    def __init__(self, limit_bytes: int = PLAIN_BYTES) -> None:
        self._kept: OrderedDict[Key, bytes] = OrderedDict()
        self._bytes = 0
        self._limit = limit_bytes
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, wire: bytes | memoryview, convert: Callable[[], dict]) -> dict:
        """``convert()``, the plain data of the message whose bytes are ``wire``: a new copy of
        the kept conversion when these bytes were converted before."""
        key = digest(wire)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
                self.hits += 1
        if kept is not None:
            return pickle.loads(kept)
        value = convert()
        packed = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self.misses += 1
            if len(packed) <= self._limit // 10 and key not in self._kept:
                self._kept[key] = packed
                self._bytes += len(packed)
                while self._bytes > self._limit:
                    _, dropped = self._kept.popitem(last=False)
                    self._bytes -= len(dropped)
        return value


PLAIN = PlainMemo()
