"""Protobuf wire format, for requests assembled from bytes that are already serialised.

``modelplane simulate`` keeps every stored object's wire bytes; a request
that carries a thousand InferenceClusters is then the request's own bytes
followed by map entries joined from those bytes (protobuf parses fields in
any order, and a map entry is just a length-delimited field), instead of
parsing megabytes into a message, copying them into the request and
serialising them again.
"""
from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

# The decoding side (modelplane.pipeline.received, in the function servers) holds the field numbers.
from modelplane.pipeline.received import EXTRA_RESOURCES, LENGTH_DELIMITED, REQUIRED_RESOURCES

__all__ = ["EXTRA_RESOURCES", "LENGTH_DELIMITED", "REQUIRED_RESOURCES", "WireRequest", "field", "map_entry", "varint"]


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """One length-delimited field (a string, a message, a map entry)."""
    return varint(number << 3 | LENGTH_DELIMITED) + varint(len(payload)) + payload


def map_entry(number: int, key: str, value: bytes) -> bytes:
    """One entry of a ``map<string, Message>`` field: key is field 1 of the entry, value field 2."""
    return field(number, field(1, key.encode()) + field(2, value))


class WireRequest:
    """A RunFunctionRequest and map entries in wire form that belong to it.

    gRPC serialises a request by calling ``SerializeToString``; this one
    appends the entries to the message's own bytes."""

    __slots__ = ("entries", "request")

    def __init__(self, request: fnv1.RunFunctionRequest, entries: list[bytes]) -> None:
        self.request = request
        self.entries = entries

    def SerializeToString(self) -> bytes:  # the protobuf method gRPC calls
        return self.request.SerializeToString() + b"".join(self.entries)

    def message(self) -> fnv1.RunFunctionRequest:
        """The whole request as one message (for tests and in-process calls)."""
        return fnv1.RunFunctionRequest.FromString(self.SerializeToString())
