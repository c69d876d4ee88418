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

from typing import Any

from google.protobuf import struct_pb2


def to_plain(s: struct_pb2.Struct, lo: float, hi: float) -> dict:
    """A Struct as dicts, lists, strings, bools, None and numbers; an integral
    number within ``[lo, hi)`` becomes an int (JSON has one number type, and
    Kubernetes means an int by an integral value)."""

    def value(v: struct_pb2.Value) -> Any:
        kind = v.WhichOneof("kind")
        if kind == "string_value":
            return v.string_value
        if kind == "struct_value":
            return {k: value(x) for k, x in v.struct_value.fields.items()}
        if kind == "list_value":
            return [value(x) for x in v.list_value.values]
        if kind == "number_value":
            n = v.number_value
            return int(n) if n.is_integer() and lo <= n < hi else n
        if kind == "bool_value":
            return v.bool_value
        return None

    return {k: value(v) for k, v in s.fields.items()}
