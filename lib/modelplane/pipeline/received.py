"""A RunFunctionRequest as it arrives: required resources kept as wire bytes until read.

compose-model-deployment gets every InferenceCluster on every call, 1,000
clusters being a ~3 MB request, and almost all of them are unchanged since
its previous call. Decoding them into Structs (about half of such a call's
CPU) only to find them in a cache keyed by their bytes is wasted work. So
the server's request decoder walks the top level of the wire format itself:
every ``required_resources`` entry is set aside as the wire bytes of its
items (one ``Resource`` message each), and the rest of the request, which is
small, is decoded as usual. A function reads an item either as bytes (and
keys a cache by them) or as a Struct, decoded on first read.

Protobuf semantics are kept: a map entry seen twice keeps the last one; an
entry's value seen twice merges (its items append). Anything the walk does
not expect (a group, a truncated field) falls back to decoding the whole
request, which then reports the error the way protobuf does.

Most calls bring an entry byte for byte as an earlier call did (every
ModelDeployment of a fleet gets the same clusters; nothing changed since).
Splitting it again is the largest cost left in such a call (10,000 clusters:
10,000 items walked in Python), so the last few entries are kept, and an
entry equal to one of them (one memcmp) is answered with that entry's items:
the same ``Items`` object, whose ``version`` lets a function keep what it
derived from them (``modelplane.deployment.clusters``).

An entry that differs from the last one kept under its key is most often the
same list with a few items changed (a cluster wrote its status). Its split
then compares each item with the kept entry's item at the same place (a
memcmp each, no hashing) and records which differ (``Items.earlier``), so a
function can update what it derived from the earlier entry instead of
reading the whole list again.

A request also gets an identity (``Received.identity``), equal for equal
bytes without hashing the large entries again (their kept items' version
stands for them): the server gives a kept answer for it (``answers``).
"""
from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from google.protobuf.message import DecodeError

from modelplane.pipeline.memo import digest

# The wire format's facts, shared with the encoding side (modelplane.render.wire).
_FIELDS = fnv1.RunFunctionRequest.DESCRIPTOR.fields_by_name
REQUIRED_RESOURCES = _FIELDS["required_resources"].number
EXTRA_RESOURCES = _FIELDS["extra_resources"].number
_VARINT, _FIXED64, _FIXED32 = 0, 1, 5
LENGTH_DELIMITED = 2


T = TypeVar("T")

# Entries kept for recognition: only large ones (a list of clusters; a deployment's ModelServices,
# one entry per namespace, are cheap to split and would push the clusters out), a few of them
# (deployments may select different clusters), and no more bytes than two 10,000-cluster fleets
# (each kept entry holds its bytes; the items are views).
KEPT_FROM_BYTES = 64 << 10
KEPT_ENTRIES = 8
KEPT_BYTES = 64 << 20


class _Malformed(Exception):
    """The walk met something it does not handle; decode the whole request instead."""


class Items(list):
    """A required entry's items (the wire bytes of each ``Resource``), shared by every request that
    brings the entry byte for byte: read them, never change them. ``version`` is unique to these
    bytes within the process; what is worked out from them is kept with them (``derived``)."""

    version: int = 0
    # What was derived from the entry last kept under the same key when these were split (its
    # items' ``_derived``: not the items, which hold their request's bytes, and so on back), and
    # the indexes of the items that differ from its items; None when there was none or the two
    # do not line up item for item.
    _earlier: dict | None = None
    _changed: tuple[int, ...] = ()

    def earlier(self, key: Hashable) -> tuple[object, tuple[int, ...]] | None:
        """What ``derived(key, ...)`` kept for the entry these items were split against, and the
        indexes of the items that differ from that entry's (every other item is byte for byte the
        one at the same index there); None when there is no such entry or nothing was derived
        from it."""
        hit = self._earlier.get(key) if self._earlier is not None else None
        return None if hit is None else (hit, self._changed)

    def derived(self, key: Hashable, make: Callable[[Items], T]) -> T:
        """``make(self)``, worked out once per ``key`` and kept with these items: as long as the
        decoder keeps them (``RECENT``) or a call still reads them, and no longer. Two threads
        missing at once both make it, which is harmless: it depends on the bytes alone."""
        memo = self._derived_memo()
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = make(self)
            self._earlier = None    # what was derived from the earlier entry has served
        return hit

    def _derived_memo(self) -> dict:
        return self.__dict__.setdefault("_derived", {})


_versions = itertools.count(1)


class _Recent:
    """Entries seen lately, by length: (the entry's bytes, its key, its items). Thread-safe."""

    def __init__(self) -> None:
        self._entries: OrderedDict[int, tuple[bytes | memoryview, str, Items]] = OrderedDict()
        self._lock = threading.Lock()

    def find(self, data: bytes, start: int, stop: int) -> tuple[str, Items] | None:
        with self._lock:
            hit = self._entries.get(stop - start)
            if hit is None:
                return None
            self._entries.move_to_end(stop - start)
        wire, key, items = hit
        # bytes.startswith compares in place (memcmp); comparing a memoryview would go byte by byte
        return (key, items) if data.startswith(wire, start) else None

    def latest(self, key: str) -> Items | None:
        """The items of the entry kept last under ``key``."""
        with self._lock:
            for _, kept, items in reversed(self._entries.values()):
                if kept == key:
                    return items
        return None

    def keep(self, wire: bytes | memoryview, key: str, items: Items) -> None:
        with self._lock:
            self._entries[len(wire)] = (wire, key, items)
            self._entries.move_to_end(len(wire))
            while len(self._entries) > 1 and (len(self._entries) > KEPT_ENTRIES or
                                              sum(len(w) for w, _, _ in self._entries.values()) > KEPT_BYTES):
                self._entries.popitem(last=False)


RECENT = _Recent()


@dataclass
class Received:
    """The request without its required resources, and those as wire bytes."""

    message: fnv1.RunFunctionRequest
    # requirement name -> the wire bytes of each item (a ``Resource`` message, as bytes or a
    # read-only memoryview), in order
    required: dict[str, Sequence[bytes | memoryview]] = field(default_factory=dict)
    # Equal for two requests of equal bytes (within this process), None when not worked out: a
    # digest of the request without its required resources, and per required entry its kept
    # items' version (a large entry) or a digest of its bytes (``pipeline.answers``).
    identity: Hashable | None = None
    _decoded: dict[str, list[struct_pb2.Struct]] = field(default_factory=dict, repr=False)

    def structs(self, name: str) -> list[struct_pb2.Struct] | None:
        """The requirement's resources as Structs (decoded once), None if it was not sent."""
        if name not in self.required:
            return None
        if name not in self._decoded:
            try:
                self._decoded[name] = [decode_item(item) for item in self.required[name]]
            except ValueError as err:
                raise undecodable(name, err) from None
        return self._decoded[name]


def undecodable(name: str, err: ValueError) -> ValueError:
    """The error for requirement ``name`` whose item did not decode (``err``: from ``decode_item``)."""
    return ValueError(f"required resource {name!r} {err}")


def decode_item(item: bytes | memoryview) -> struct_pb2.Struct:
    """One required item's resource; ValueError saying why when its bytes do not decode."""
    try:
        return fnv1.Resource.FromString(item).resource
    except DecodeError as err:
        raise ValueError(f"could not be decoded: {err}") from None


def _varint(buf: memoryview, i: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while i < end:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7
        if shift > 63:
            break
    raise _Malformed


def _fields(buf: memoryview, start: int, end: int):
    """(field number, wire type, where the field starts, where its value starts, where it ends)."""
    i = start
    while i < end:
        begin = i
        tag, i = _varint(buf, i, end)
        number, wire = tag >> 3, tag & 7
        if wire == _VARINT:
            _, stop = _varint(buf, i, end)
        elif wire == LENGTH_DELIMITED:
            length, i = _varint(buf, i, end)
            stop = i + length
        elif wire == _FIXED64:
            stop = i + 8
        elif wire == _FIXED32:
            stop = i + 4
        else:
            raise _Malformed
        if stop > end or number == 0:
            raise _Malformed
        yield number, wire, begin, i, stop
        i = stop


def _entry(data: bytes, buf: memoryview, start: int, end: int) -> tuple[str, Items]:
    """One ``map<string, Resources>`` entry: its key and its value's items (views into the bytes),
    a large entry as kept from an equal one or split and kept."""
    if end - start < KEPT_FROM_BYTES:
        return _split(buf, start, end)
    if isinstance(data, bytes):
        hit = RECENT.find(data, start, end)
        if hit is not None:
            return hit
    # An entry that is most of the request (the clusters) is kept as a view into it, which spares
    # a copy of megabytes; a smaller one is copied, so it does not keep a large request alive.
    if isinstance(data, bytes) and 2 * (end - start) >= len(data):
        wire: bytes | memoryview = buf[start:end]
        within, shift = data, start     # where the entry's bytes can be compared in place
    else:
        wire = within = bytes(buf[start:end])
        shift = 0
    key, items = _split(memoryview(wire), 0, len(wire), (within, shift))
    RECENT.keep(wire, key, items)
    return key, items


def _split(buf: memoryview, start: int, end: int,
           against: tuple[bytes, int] | None = None) -> tuple[str, Items]:
    """An entry's key and items; with ``against`` (the bytes ``buf`` views and where it starts in
    them), items are compared with those of the entry last kept under the same key."""
    key, items = "", Items()
    items.version = next(_versions)
    values = 0
    for number, wire, _, value, stop in _fields(buf, start, end):
        if number == 1 and wire == LENGTH_DELIMITED:
            try:
                key = bytes(buf[value:stop]).decode("utf-8")
            except UnicodeDecodeError:
                raise _Malformed from None
        elif number == 2 and wire == LENGTH_DELIMITED:
            values += 1
            earlier = RECENT.latest(key) if against is not None and values == 1 else None
            found, changed = _items(buf, value, stop, earlier, *(against or (b"", 0)))
            items.extend(found)
            if earlier is not None and changed is not None:
                items._earlier, items._changed = earlier._derived_memo(), changed
    if values > 1:   # a value seen twice merges: the items no longer line up with one earlier value
        items._earlier, items._changed = None, ()
    return key, items


_ITEM_TAG = 1 << 3 | LENGTH_DELIMITED  # Resources.items, field 1


def _items(buf: memoryview, start: int, end: int, earlier: Items | None = None, within: bytes = b"",
           shift: int = 0) -> tuple[list[memoryview], tuple[int, ...] | None]:
    """A ``Resources`` message's items. Field 1 is the repeated item; anything else it might carry
    is not ours to read. Items follow one another in the common case, so they are read in a
    tight loop (half the cost of the generic walk, 10,000 times per call at 10,000 clusters);
    from the first other field on, the generic walk takes over.

    With ``earlier``, each item is also compared with ``earlier``'s at its index, in place in
    ``within`` (the bytes ``buf`` views from ``shift`` on). Returns the items and the indexes that
    differ; None for those when there is nothing to compare, the lists differ in length, or the
    message holds anything but items."""
    out = []
    changed: list[int] | None = None if earlier is None else []
    same_at = within.startswith
    count = len(earlier) if earlier is not None else 0
    i = start
    while i < end and buf[i] == _ITEM_TAG:
        j = i + 1
        length = shift_bits = 0
        while True:
            if j >= end or shift_bits > 63:
                raise _Malformed
            b = buf[j]
            j += 1
            length |= (b & 0x7F) << shift_bits
            if b < 0x80:
                break
            shift_bits += 7
        i = j + length
        if i > end:
            raise _Malformed
        if changed is not None:
            k = len(out)
            if k >= count or len(earlier[k]) != length or not same_at(earlier[k], j + shift):  # type: ignore[index]
                changed.append(k)
        out.append(buf[j:i])
    if i < end:
        out.extend(buf[v:s] for n, w, _, v, s in _fields(buf, i, end) if n == 1 and w == LENGTH_DELIMITED)
        return out, None
    return out, (tuple(changed) if changed is not None and len(out) == count else None)


def receive(data: bytes) -> Received:
    """Split a request's wire bytes; raises protobuf's DecodeError when it does not decode."""
    buf = memoryview(data)
    rest: list[memoryview] = []
    required: dict[str, Sequence[bytes | memoryview]] = {}
    entries: list[tuple[str, Hashable]] = []
    try:
        for number, wire, begin, value, stop in _fields(buf, 0, len(buf)):
            if number == REQUIRED_RESOURCES and wire == LENGTH_DELIMITED:
                key, items = _entry(data, buf, value, stop)
                required[key] = items
                # a kept entry's items are the same object for the same bytes: their version says it
                kept = isinstance(data, bytes) and stop - value >= KEPT_FROM_BYTES
                entries.append((key, items.version if kept else digest(buf[value:stop])))
            else:
                rest.append(buf[begin:stop])
    except _Malformed:
        return Received(fnv1.RunFunctionRequest.FromString(data))
    own = b"".join(rest)
    return Received(fnv1.RunFunctionRequest.FromString(own), required, identity=(digest(own), tuple(entries)))
