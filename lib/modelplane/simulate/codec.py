"""Protobuf conversions for a long simulation, done once per object instead of once per render.

Every render converts the XR and each observed composed resource to a
protobuf Struct, and every desired resource back. In a simulation most of
them are the same object render after render, so:

- ``encode`` keeps the Struct of each object it converted, by identity. The
  simulator never modifies an object it stored (a change stores a new
  object), so an object it sees again has not changed. The entry holds the
  object itself, so its id cannot be reused while the entry lives.
- ``decode`` keeps the dict of each Struct by its deterministic wire bytes
  (serialising is C code, converting is Python); callers get a shared dict
  and must not modify it (render's ``finish`` copies what it changes).

Both caches are bounded (least recently used out first) and thread-safe:
renders of one wave run in threads.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from google.protobuf import struct_pb2

from modelplane.render.engine import Codec

ENCODED = 200_000
DECODED = 100_000


class CachingCodec(Codec):
    def __init__(self, encoded: int = ENCODED, decoded: int = DECODED) -> None:
        self._encoded: OrderedDict[int, tuple[Any, struct_pb2.Struct]] = OrderedDict()
        self._decoded: OrderedDict[bytes, dict] = OrderedDict()
        self._limits = (encoded, decoded)
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def encode(self, obj: dict) -> struct_pb2.Struct:
        with self._lock:
            hit = self._encoded.get(id(obj))
            if hit is not None and hit[0] is obj:
                self._encoded.move_to_end(id(obj))
                self.hits += 1
                return hit[1]
        struct = super().encode(obj)
        with self._lock:
            self.misses += 1
            self._encoded[id(obj)] = (obj, struct)
            if len(self._encoded) > self._limits[0]:
                self._encoded.popitem(last=False)
        return struct

    def decode(self, struct: struct_pb2.Struct) -> dict:
        wire = struct.SerializeToString(deterministic=True)
        with self._lock:
            hit = self._decoded.get(wire)
            if hit is not None:
                self._decoded.move_to_end(wire)
                self.hits += 1
                return hit
        out = super().decode(struct)
        with self._lock:
            self.misses += 1
            self._decoded[wire] = out
            if len(self._decoded) > self._limits[1]:
                self._decoded.popitem(last=False)
        return out
