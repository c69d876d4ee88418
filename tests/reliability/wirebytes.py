"""Hostile RunFunctionRequest bytes for the server's own wire decoder (``modelplane.pipeline.received``).

``received.receive`` walks the top level of the protobuf wire format itself,
so it must fail the way protobuf does on anything malformed: bytes that do
not decode become a FATAL answer (``server.undecodable_response``), never an
exception out of the deserializer (gRPC would answer UNKNOWN and log a
traceback) and never a hang. Bytes are drawn as:

- mutations of a real request: truncated, bytes flipped or inserted, a
  length turned into a huge varint, a field's wire type changed, a piece
  repeated (protobuf merges repeated messages, so some of these still decode);
- random bytes;
- a Struct nested past protobuf's depth limit.

``judge`` says whether one answer is clean; over gRPC a clean refusal is an
OK response or a status that says what was wrong (RESOURCE_EXHAUSTED for a
message over the size limit), never UNKNOWN or INTERNAL.
"""
from __future__ import annotations

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import strategies as st

from tests import support
from tests.reliability import fleet

METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"


def healthy(function: str) -> bytes:
    """A healthy request of ``function`` with every input it requires answered from the fleet."""
    xr = fleet.baseline(function)
    rsp = fleet.converge(support.run, function, xr)
    required = fleet.answer(rsp.requirements, fleet.catalog())
    return support.request(xr, required=required).SerializeToString()


def nested(depth: int) -> bytes:
    """A request whose XR nests ``depth`` Structs deep (protobuf stops decoding at 100)."""
    value: dict = {"leaf": 1}
    for _ in range(depth):
        value = {"a": value}
    return support.request({"apiVersion": "v1", "kind": "X", "metadata": {"name": "x"}, "spec": value}) \
        .SerializeToString()


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


@st.composite
def mutated(draw, base: bytes) -> bytes:
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "flip", "insert", "huge-length", "wire-type", "repeat"]))
        if not data:
            break
        i = draw(st.integers(0, len(data) - 1))
        if op == "truncate":
            del data[i:]
        elif op == "flip":
            data[i] ^= draw(st.integers(1, 255))
        elif op == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=16))
        elif op == "huge-length":
            data[i:i + 1] = _varint(draw(st.sampled_from([2**31 - 1, 2**32, 2**63 - 1, 2**64 - 1, len(data) + 1])))
        elif op == "wire-type":
            data[i] = (data[i] & ~7) | draw(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7]))
        else:
            j = draw(st.integers(i, len(data)))
            data[j:j] = data[i:j]
    return bytes(data)


def requests(base: bytes) -> st.SearchStrategy[bytes]:
    return st.one_of(
        mutated(base),
        st.binary(max_size=512),
        st.sampled_from([nested(30), nested(48), nested(101), nested(400), b"", b"\x00", b"\xff" * 11, _varint(2**64 - 1)]),
    )


def judge(function: str, rsp: fnv1.RunFunctionResponse | None, error: grpc.RpcError | None = None) -> str | None:
    """Why an answer to hostile bytes is not clean (one line), else None."""
    if error is not None:
        code = error.code()
        if code in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INVALID_ARGUMENT):
            return None
        return f"{function}: gRPC {code.name}: {error.details()}"
    message = support.fatal(rsp) if rsp is not None else None
    if message is not None and message.startswith("internal error"):
        return f"{function}: {message}"
    return None


def stub(channel: grpc.Channel):
    """RunFunction taking raw request bytes."""
    return channel.unary_unary(METHOD, request_serializer=None,
                               response_deserializer=fnv1.RunFunctionResponse.FromString)
