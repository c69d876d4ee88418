"""A few fixed hostile request bytes through the server's own decoder: a FATAL answer, never a crash.

``make soak`` draws thousands of these (``tests/reliability/wirebytes.py``);
these rows are the shapes that matter, cheap enough for ``make test``.
"""
from __future__ import annotations

from dataclasses import dataclass

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import functions
from modelplane.pipeline.received import REQUIRED_RESOURCES, receive
from modelplane.pipeline.server import Undecodable, decode_request, run_compose, undecodable_response

from tests import support
from tests.reliability import wirebytes

CLASS = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": "gpu"},
         "spec": {"devices": [{"name": "gpu", "count": 1, "driver": "gpu.nvidia.com",
                               "deviceClassName": "gpu.nvidia.com"}]}}


def _healthy() -> bytes:
    req = support.request(CLASS, required={"clusters": [{"apiVersion": "v1", "kind": "X", "metadata": {"name": "a"}}]})
    return req.SerializeToString()


def _entry(key: bytes, value: bytes) -> bytes:
    body = b"\x0a" + bytes([len(key)]) + key + b"\x12" + bytes([len(value)]) + value
    return bytes([REQUIRED_RESOURCES << 3 | 2, len(body)]) + body


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    decodes: bool       # whether the server reads it (then the function answers as usual)
    lazy: bool = False  # a required item: set aside as bytes, decoded (and refused) only when read


CASES = [
    Case("empty", b"", True),
    Case("truncated mid-field", _healthy()[:-7], False),
    Case("length says 2^63", b"\x0a" + b"\xff" * 8 + b"\x7f" + b"abc", False),
    Case("varint longer than ten bytes", b"\x08" + b"\xff" * 11, False),
    Case("field number zero", b"\x02\x01x", False),
    Case("an unknown group (wire type 3): the walk hands it to protobuf", b"\x0b\x0c", True),
    Case("map key that is not UTF-8", _entry(b"\xff\xfe", b""), False),
    Case("required item that is not a Resource", _entry(b"clusters", b"\x0a\x03\x0a\xff\xff"), True, lazy=True),
    Case("nested past protobuf's limit", wirebytes.nested(101), False),
    Case("nested just under it", wirebytes.nested(30), True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_hostile_bytes_get_an_answer_never_an_exception(case):
    req = decode_request(case.data)                     # must not raise
    assert isinstance(req, Undecodable) != case.decodes, req
    compose = functions.load("compose-inference-class")
    rsp = undecodable_response(req) if isinstance(req, Undecodable) else run_compose("compose-inference-class",
                                                                                      compose, req)
    message = support.fatal(rsp) or ""
    assert not message.startswith("internal error"), message
    if not case.decodes:
        assert message.startswith("spec: "), message   # names where to look, like every FATAL


def test_the_walk_and_protobuf_agree_on_what_decodes():
    for case in [c for c in CASES if not c.lazy]:
        try:
            fnv1.RunFunctionRequest.FromString(case.data)
            protobuf = True
        except Exception:  # noqa: BLE001 - any refusal
            protobuf = False
        try:
            receive(case.data)
            walk = True
        except Exception:  # noqa: BLE001
            walk = False
        assert walk == protobuf, case.name


def test_over_grpc_hostile_and_oversized_bytes_leave_the_server_serving():
    with support.serve_process("compose-inference-class", "--insecure") as address, \
            grpc.insecure_channel(address) as channel:
        raw = wirebytes.stub(channel)
        for case in CASES:
            rsp = raw(case.data, timeout=30, wait_for_ready=True)
            assert not (support.fatal(rsp) or "").startswith("internal error"), case.name
        with pytest.raises(grpc.RpcError) as err:
            raw(b"\x0a" + b"\xff" * (64 * 1024 * 1024), timeout=30)   # over the 64 MiB receive limit
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert support.fatal(support.call(address, support.request(CLASS))) is None
