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
from modelplane.pipeline.structwire import varint

__all__ = ["EXTRA_RESOURCES", "LENGTH_DELIMITED", "REQUIRED_RESOURCES", "WireRequest", "field", "map_entry",
           "map_entry_parts", "varint"]


def field(number: int, payload: bytes) -> bytes:
    """One length-delimited field (a string, a message, a map entry)."""
    return varint(number << 3 | LENGTH_DELIMITED) + varint(len(payload)) + payload


def map_entry(number: int, key: str, value: bytes) -> bytes:
    """One entry of a ``map<string, Message>`` field: key is field 1 of the entry, value field 2."""
    return b"".join(map_entry_parts(number, key, value))


def map_entry_parts(number: int, key: str, value: bytes) -> tuple[bytes, bytes]:
    """``map_entry`` as its header and ``value`` itself: a request joins them once, so the
    megabytes of a thousand clusters are copied once per call, not once per framing."""
    inner = field(1, key.encode()) + varint(2 << 3 | LENGTH_DELIMITED) + varint(len(value))
    return varint(number << 3 | LENGTH_DELIMITED) + varint(len(inner) + len(value)) + inner, value


class WireRequest:
    """A RunFunctionRequest and fields in wire form that belong to it (``entries``: bytes that
    follow the message's own, such as ``map_entry`` or the parts of ``map_entry_parts``).

    gRPC serialises a request by calling ``SerializeToString``; this one
    appends the entries to the message's own bytes, in one join."""

    __slots__ = ("entries", "request")

    def __init__(self, request: fnv1.RunFunctionRequest, entries: list[bytes]) -> None:
        self.request = request
        self.entries = entries

    def SerializeToString(self) -> bytes:  # the protobuf method gRPC calls
        return b"".join([self.request.SerializeToString(), *self.entries])

    def message(self) -> fnv1.RunFunctionRequest:
        """The whole request as one message (for tests and in-process calls)."""
        return fnv1.RunFunctionRequest.FromString(self.SerializeToString())
