"""Protobuf conversions for a long simulation, done once per object instead of once per render.

Every render converts the XR and each observed composed resource to a
protobuf Struct, and every desired resource back. In a simulation most of
them are the same object render after render, so:

- ``encode`` keeps the wire bytes of each object it converted, by identity,
  until ``forget``: the simulator never modifies an object it stored (a
  change stores a new object and forgets the old one), so an object it sees
  again has not changed. Bytes, not Structs: a fleet holds tens of
  thousands of objects, and parsing bytes back is C code.
- ``decode`` keeps the dict of each Struct by a digest of its deterministic
  wire bytes (serialising is C code, converting is Python); callers get a
  shared dict and must not modify it (render's ``finish`` copies what it
  changes). Bounded, least recently used out first.

Thread-safe: renders of one wave run in threads.
"""
from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2

from modelplane.pipeline.memo import DigestMemo
from modelplane.render.engine import Codec

DECODED = 20_000


class CachingCodec(Codec):
    def __init__(self, decoded: int = DECODED) -> None:
        self._encoded: dict[int, tuple[Any, bytes]] = {}
        self._decoded: DigestMemo[dict] = DigestMemo(decoded)
        self.hits = self.misses = 0    # encodes; decodes count in ``_decoded``

    def encode(self, obj: dict) -> struct_pb2.Struct:
        hit = self._encoded.get(id(obj))
        if hit is not None and hit[0] is obj:
            self.hits += 1
            return struct_pb2.Struct.FromString(hit[1])
        struct = super().encode(obj)
        self.misses += 1
        self._encoded[id(obj)] = (obj, struct.SerializeToString())
        return struct

    def forget(self, obj: Any) -> None:
        """``obj`` was replaced or deleted: drop its bytes (and the reference that kept its id taken)."""
        hit = self._encoded.get(id(obj))
        if hit is not None and hit[0] is obj:
            del self._encoded[id(obj)]

    def decode(self, struct: struct_pb2.Struct) -> dict:
        plain = super().decode
        return self._decoded.get(struct.SerializeToString(deterministic=True), lambda: plain(struct))
