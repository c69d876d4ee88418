"""A protobuf Struct as plain data, in one pass.

Every RunFunction call carries its XR and observed resources as Structs and
every response brings desired resources back, so at fleet scale reading
Structs is a real share of the work on both sides of the wire. The SDK's
``struct_to_dict`` (``json_format.MessageToDict``) walks each value through
several layers of generic Python, and callers then walk the result again to
restore integers; this walks it once, about twice as fast. (The other way,
``Struct.update`` beats building the wire bytes in Python, so it stays.)
"""
from __future__ import annotations

import sys
from typing import Any

from google.protobuf import struct_pb2


def to_plain(s: struct_pb2.Struct, lo: float, hi: float, intern_up_to: int = -1) -> dict:
    """A Struct as dicts, lists, strings, bools, None and numbers; an integral
    number within ``[lo, hi)`` becomes an int (JSON has one number type, and
    Kubernetes means an int by an integral value). With ``intern_up_to`` >= 0,
    every key and each string of at most that many characters is interned
    (``sys.intern``): a simulation holds the same few values thousands of times."""
    interning = intern_up_to >= 0
    intern = sys.intern

    def value(v: struct_pb2.Value) -> Any:
        kind = v.WhichOneof("kind")
        if kind == "string_value":
            text = v.string_value
            return intern(text) if len(text) <= intern_up_to else text
        if kind == "struct_value":
            return mapping(v.struct_value.fields)
        if kind == "list_value":
            return [value(x) for x in v.list_value.values]
        if kind == "number_value":
            n = v.number_value
            return int(n) if n.is_integer() and lo <= n < hi else n
        if kind == "bool_value":
            return v.bool_value
        return None

    def mapping(fields) -> dict:
        # by key: cheaper than items() on a protobuf map
        if interning:
            return {intern(k): value(fields[k]) for k in fields}
        return {k: value(fields[k]) for k in fields}

    return mapping(s.fields)
