"""structwire writes the bytes the SDK's Struct.update + SerializeToString write, byte for byte, and
bytes that parse into the very Struct Struct.update builds (the same bytes once serialised)."""
import random

import pytest
from google.protobuf import struct_pb2
from modelplane.pipeline.structwire import order, parsed_bytes, struct_bytes, varint
from modelplane.render.fetch import as_struct


def _random_value(rng: random.Random, depth: int):
    pick = rng.randrange(9 if depth < 4 else 6)
    if pick == 0:
        return None
    if pick == 1:
        return rng.random() < 0.5
    if pick == 2:
        return rng.choice([0, 1, -7, 2**31, 2**53 + 1, 10**20])
    if pick == 3:
        return rng.choice([0.0, -0.5, 1e300, 3.25])
    if pick in (4, 5):
        return rng.choice(["", "True", "x" * rng.randrange(300), "é∂", "a" * 20_000])
    if pick == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return _random_dict(rng, depth + 1)


def _random_dict(rng: random.Random, depth: int) -> dict:
    keys = [rng.choice(["", "name", "status", "spec", "ä"]) + str(rng.randrange(10**6))
            for _ in range(rng.randrange(0, 70 if depth < 2 else 8))]
    return {k: _random_value(rng, depth) for k in keys}


def test_the_bytes_equal_the_sdks_for_random_documents():
    rng = random.Random(35)
    for _ in range(300):
        doc = _random_dict(rng, 0)
        assert struct_bytes(doc) == as_struct(doc).SerializeToString()


def test_the_bytes_equal_the_sdks_for_edge_values():
    doc = {"": None, "empty": {}, "none": [], "t": (1, "a"), "f": False, "z": 0, "neg": -3, "big": 2**60,
           "nested": {"a": [{"b": [[], {}]}]}, "long": "y" * 70_000}
    assert struct_bytes(doc) == as_struct(doc).SerializeToString()
    assert struct_bytes({}) == b""


def test_subclasses_convert_as_the_sdk_converts_them():
    class Text(str):
        pass

    class Doc(dict):
        pass

    doc = {"a": Text("x"), "b": Doc(c=1, d=[Text("y")]), "e": True}
    assert struct_bytes(doc) == as_struct(doc).SerializeToString()


def test_a_value_a_struct_cannot_hold_is_refused():
    with pytest.raises(ValueError, match="Unexpected type bytes"):
        struct_bytes({"a": b"raw"})
    with pytest.raises(ValueError, match="Unexpected type"):
        as_struct({"a": b"raw"})


def test_order_is_the_order_a_map_serialises_in():
    from crossplane.function.proto.v1 import run_function_pb2 as fnv1
    keys = tuple(f"r{i}" for i in (5, 1, 30, 12, 7, 2, 19, 3))
    state = fnv1.State()
    for key in keys:
        state.resources[key].ready = fnv1.READY_TRUE
    assert b"".join(fnv1.State(resources={k: state.resources[k]}).SerializeToString() for k in order(keys)) \
        == state.SerializeToString()
    assert order(("only",)) == ("only",)


def test_varint_matches_protobufs_length_prefix():
    for n in (0, 127, 128, 16_383, 16_384, 70_000):
        wire = struct_pb2.Value(string_value="a" * n).SerializeToString()
        assert wire == b"\x1a" + varint(n) + b"a" * n
    assert varint(2**35) == b"\x80\x80\x80\x80\x80\x01"


def _parsed(doc: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.ParseFromString(parsed_bytes(doc))
    return s


def test_parsed_bytes_build_the_struct_update_builds_down_to_its_serialised_order():
    rng = random.Random(36)
    differ = 0
    for _ in range(300):
        doc = _random_dict(rng, 0)
        built = as_struct(doc)
        assert _parsed(doc) == built
        assert _parsed(doc).SerializeToString() == built.SerializeToString()
        # parsing the serialised bytes instead inserts each map backwards: another order
        differ += struct_pb2.Struct.FromString(built.SerializeToString()).SerializeToString() \
            != built.SerializeToString()
    assert differ > 0, "no document told the two orders apart: the test proves nothing"


def test_parsed_bytes_convert_edge_values_and_subclasses_as_update_does():
    class Text(str):
        pass

    doc = {"": None, "empty": {}, "none": [], "t": (1, "a"), "f": False, "z": 0, "big": 2**60,
           "sub": Text("x"), "nested": {"a": [{"b": [[], {}]}]}, "long": "y" * 70_000}
    assert _parsed(doc).SerializeToString() == as_struct(doc).SerializeToString()
    with pytest.raises(ValueError, match="Unexpected type bytes"):
        parsed_bytes({"a": b"raw"})
