"""Plain data to and from protobuf Struct bytes, worked out once per the bytes it starts from.

A ModelDeployment's calls bring the same small objects again and again: its
XR, its observed children (twenty for ten replicas), every InferenceClass;
and at rest they desire the same children again. Each was converted on every
call: to dicts coming in, to wire bytes going out. At 20 classes and 20
children that was about half of a composing call (2.2 of 5 ms at 1,000
clusters on a fleet of mixed clouds, before the desired side).

- In (``PLAIN``): equal bytes are equal content, so the first conversion of
  some bytes is kept as a pickle and every later one is ``pickle.loads`` of
  it: fresh dicts and lists a caller may change, built in C, equal to what
  the conversion returns (same keys, same order, same values).
- Out (``WIRE``): a desired object is pickled (in C) and the wire bytes
  built from it are kept by that pickle's digest: equal pickles are equal
  data (same types, keys in the same order), so the same bytes.

Each is least recently used out first, at most ``KEPT_BYTES`` in all; a value
larger than a tenth of that is worked out every time (a cluster list entry
is read otherwise: ``deployment.clusters``).
"""
from __future__ import annotations

import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from modelplane.pipeline.memo import Key, digest

KEPT_BYTES = 16 << 20


class BytesMemo:
    """Bytes worked out from some wire bytes, kept by the digest of those. Thread-safe."""

    def __init__(self, limit_bytes: int = KEPT_BYTES) -> None:
        self._kept: OrderedDict[Key, bytes] = OrderedDict()
        self._bytes = 0
        self._limit = limit_bytes
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def find(self, key: Key) -> bytes | None:
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
                self.hits += 1
            return kept

    def keep(self, key: Key, value: bytes) -> None:
        with self._lock:
            self.misses += 1
            if len(value) <= self._limit // 10 and key not in self._kept:
                self._kept[key] = value
                self._bytes += len(value)
                while self._bytes > self._limit:
                    _, dropped = self._kept.popitem(last=False)
                    self._bytes -= len(dropped)

    def get(self, wire: bytes | memoryview, make: Callable[[], bytes]) -> bytes:
        """``make()``, kept for ``wire``: the kept value when these bytes were seen before."""
        key = digest(wire)
        kept = self.find(key)
        if kept is None:
            kept = make()
            self.keep(key, kept)
        return kept


class PlainMemo:
    """Plain data converted from wire bytes, kept as pickles by the digest of those bytes."""

    def __init__(self, limit_bytes: int = KEPT_BYTES) -> None:
        self.kept = BytesMemo(limit_bytes)

    def get(self, wire: bytes | memoryview, convert: Callable[[], dict]) -> dict:
        """``convert()``, the plain data of the message whose bytes are ``wire``: a new copy of
        the kept conversion when these bytes were converted before."""
        key = digest(wire)
        kept = self.kept.find(key)
        if kept is not None:
            return pickle.loads(kept)
        value = convert()
        self.kept.keep(key, pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
        return value


def wire_of(obj: Any, build: Callable[[], bytes]) -> bytes:
    """``build()``, the wire bytes of plain data ``obj``, kept by the digest of ``obj``'s pickle
    (``WIRE``); built every time for data that does not pickle."""
    try:
        key = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return build()
    return WIRE.get(key, build)


PLAIN = PlainMemo()
WIRE = BytesMemo()
