"""Protobuf conversions for a long simulation, done once per object instead of once per render.

Every render converts the XR and each observed composed resource to a
protobuf Struct, and every desired resource back. In a simulation most of
them are the same object render after render, so:

- ``encode_wire`` keeps the wire bytes of each object it converted, by
  identity, until ``forget``: the simulator never modifies an object it
  stored (a change stores a new object and forgets the old one), so an object
  it sees again has not changed. Bytes, not Structs: a fleet holds tens of
  thousands of objects, and a request is assembled from bytes. At most
  ``ENCODED_BYTES`` of them: keeping them all was a fifth of a 2,500-cluster
  simulation's memory (226 MB) for few hits (at 300 clusters 26% of encodes;
  at 1,000 clusters most encodes are of an object's first version). 5,000
  clusters: 64 MiB kept, 267 s and 2,024 MiB; 40 MiB, 252 s and 1,975 MiB.
  When full, a new object's bytes are not kept until forgotten ones make
  room: an object is sent again when its reader renders again, mostly a round
  later, after everything else was sent, so least-recently-used eviction
  would drop each object just before its turn came back.
  A miss is encoded by ``structwire`` (the SDK's bytes, without building a
  Struct). Keeping each top-level field's bytes too, by the identity of its
  value (a status written shares the rest of the object), was measured and
  dropped: 13% of the bytes encoded at 300 clusters, for as many bytes kept.
- ``decode`` keeps the dict of each Struct by a digest of its deterministic
  wire bytes (serialising is C code, converting is Python); callers get a
  shared dict and must not modify it (render's ``finish`` copies what it
  changes). Bounded, least recently used out first. It converts as
  ``render.engine``'s ``_data`` does, to the same dicts in the same key order,
  but reads each map by key instead of through ``items()`` (a Python-level
  generator in the protobuf runtime) and interns keys and short strings: the
  decoded objects are most of a simulated world, and their keys ("metadata",
  "name", ...) and values ("True", a cluster's name) repeat across tens of
  thousands of them (at 300 clusters, 540,000 key strings held 29 MB).

Thread-safe: renders of one wave run in threads.
"""
from __future__ import annotations

import threading
from typing import Any

from google.protobuf import struct_pb2

from modelplane.pipeline import structs
from modelplane.pipeline.memo import DigestMemo
from modelplane.pipeline.structwire import struct_bytes
from modelplane.render import yaml11
from modelplane.render.engine import Codec

DECODED = 20_000
ENCODED_BYTES = 40 << 20
SHORT = 64   # string values up to this long are interned


class CachingCodec(Codec):
    def __init__(self, decoded: int = DECODED, encoded_bytes: int = ENCODED_BYTES) -> None:
        self._encoded: dict[int, tuple[Any, bytes]] = {}
        self._encoded_bytes = 0
        self._encoded_limit = encoded_bytes
        self._lock = threading.Lock()
        self._decoded: DigestMemo[dict] = DigestMemo(decoded)
        self.hits = self.misses = 0    # encodes; decodes count in ``_decoded``

    def encode(self, obj: dict) -> struct_pb2.Struct:
        return struct_pb2.Struct.FromString(self.encode_wire(obj))

    def encode_wire(self, obj: dict) -> bytes:
        with self._lock:
            hit = self._encoded.get(id(obj))
            if hit is not None and hit[0] is obj:
                self.hits += 1
                return hit[1]
            self.misses += 1
        wire = struct_bytes(obj)
        with self._lock:
            old = self._encoded.pop(id(obj), None)   # another thread encoded the same object meanwhile
            if old is not None:
                self._encoded_bytes -= len(old[1])
            if self._encoded_bytes + len(wire) <= self._encoded_limit:
                self._encoded[id(obj)] = (obj, wire)
                self._encoded_bytes += len(wire)
        return wire

    def forget(self, obj: Any) -> None:
        """``obj`` was replaced or deleted: drop its bytes (and the reference that kept its id taken)."""
        with self._lock:
            hit = self._encoded.get(id(obj))
            if hit is not None and hit[0] is obj:
                del self._encoded[id(obj)]
                self._encoded_bytes -= len(hit[1])

    def decode(self, struct: struct_pb2.Struct) -> dict:
        return self._decoded.get(struct.SerializeToString(deterministic=True), lambda: plain(struct))


def plain(struct: struct_pb2.Struct, lo: float = yaml11.INT64_MIN, hi: float = yaml11.INT64_MAX + 1) -> dict:
    """``render.engine._data(struct)``: the same dicts, keys in the same order, strings interned."""
    return structs.to_plain(struct, lo, hi, intern_up_to=SHORT)
