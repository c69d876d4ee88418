"""pipeline.plain: a Struct's plain data converted once per its bytes, handed out as fresh copies;
pipeline.memo.digest: a view is hashed by its own bytes, not the whole object it views."""
from __future__ import annotations

import copy

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.errors import InputError
from modelplane.pipeline.composition import Composition, to_dict
from modelplane.pipeline.memo import digest
from modelplane.pipeline.plain import PlainMemo, wire_of
from modelplane.pipeline.received import Received
from modelplane.pipeline.server import decode_request

from tests import support

OBJ = {"metadata": {"name": "a", "labels": {"tier": "prod"}}, "spec": {"replicas": 3, "list": [1, "x", None]}}


class _Converter:
    def __init__(self, value: dict) -> None:
        self.value, self.calls = value, 0

    def __call__(self) -> dict:
        self.calls += 1
        return copy.deepcopy(self.value)


def test_the_same_bytes_are_converted_once_and_each_caller_gets_its_own_copy():
    memo, convert = PlainMemo(), _Converter(OBJ)
    first = memo.get(b"wire", convert)
    first["spec"]["replicas"] = 99   # a caller changes what it got
    again = memo.get(b"wire", convert)
    assert convert.calls == 1
    assert again == OBJ, "-want, +got: a later caller saw an earlier caller's change"
    assert list(again) == list(OBJ) and again is not memo.get(b"wire", convert)


def test_other_bytes_are_converted_again():
    memo, convert = PlainMemo(), _Converter(OBJ)
    memo.get(b"one", convert)
    memo.get(b"two", convert)
    assert convert.calls == 2


def test_the_least_recently_used_go_first_and_an_object_too_large_is_never_kept():
    memo = PlainMemo(limit_bytes=2000)
    big = _Converter({"x": "y" * 300})   # a pickle over a tenth of the limit
    memo.get(b"big", big)
    memo.get(b"big", big)
    assert big.calls == 2
    small = [_Converter({"k": "v" * 100}) for _ in range(20)]
    for i, convert in enumerate(small):
        memo.get(b"%d" % i, convert)
    memo.get(b"19", small[19])
    memo.get(b"0", small[0])
    assert (small[0].calls, small[19].calls) == (2, 1)


class _Request(bytes):
    """A request's bytes that count how often they are hashed whole."""

    hashed = 0

    def __hash__(self) -> int:
        type(self).hashed += 1
        return super().__hash__()


def test_a_view_is_digested_by_its_own_bytes_without_hashing_the_request_it_views():
    request = _Request(b"0123456789" * 100)
    view = memoryview(request)[10:20]
    assert digest(view) == digest(b"0123456789")
    assert _Request.hashed == 0
    hash(memoryview(request)[20:30])   # what a plain hash of the view does
    assert _Request.hashed == 1


def _composition(req: fnv1.RunFunctionRequest) -> Composition:
    return Composition(decode_request(req.SerializeToString()), fnv1.RunFunctionResponse(), "test")


def test_required_items_read_alike_as_wire_bytes_and_as_a_decoded_request():
    items = [{"metadata": {"name": f"c{i}"}, "spec": {"n": i, "f": 1.5}} for i in range(3)]
    req = support.request({"metadata": {"name": "x"}}, required={"classes": items})
    from_wire = _composition(req).required("classes")
    decoded = Composition(req, fnv1.RunFunctionResponse(), "test").required("classes")
    assert from_wire == decoded == [to_dict(i.resource) for i in req.required_resources["classes"].items]
    from_wire[0]["spec"]["n"] = 7
    assert _composition(req).required("classes")[0]["spec"]["n"] == 0


def test_an_undecodable_required_item_is_an_input_error_naming_the_requirement():
    received = Received(fnv1.RunFunctionRequest(), {"classes": [b"\x0a\xff"]})
    with pytest.raises(InputError) as err:
        Composition(received, fnv1.RunFunctionResponse(), "test").required("classes")
    assert err.value.field == "requirements"
    assert "required resource 'classes' could not be decoded" in err.value.message


class _Builder:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> bytes:
        self.calls += 1
        return b"bytes %d" % self.calls


def test_the_wire_bytes_of_equal_data_are_built_once_and_of_other_data_again():
    build = _Builder()
    first = wire_of({"a": 1, "b": [1.5, "x"], "test": "wire_of equal"}, build)
    again = wire_of({"a": 1, "b": [1.5, "x"], "test": "wire_of equal"}, build)
    assert (first, again, build.calls) == (b"bytes 1", b"bytes 1", 1)
    wire_of({"b": [1.5, "x"], "a": 1, "test": "wire_of equal"}, build)   # another order: other bytes
    wire_of({"a": 1.0, "b": [1.5, "x"], "test": "wire_of equal"}, build)  # a float is not an int
    assert build.calls == 3


def test_data_that_does_not_pickle_is_built_every_time():
    build = _Builder()
    odd = {"f": lambda: None}
    wire_of(odd, build)
    wire_of(odd, build)
    assert build.calls == 2
