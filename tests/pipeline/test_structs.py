"""modelplane.pipeline.structs.to_plain reads a Struct as the SDK's converter plus integer restoring does."""
from __future__ import annotations

import json

from crossplane.function import resource
from google.protobuf import struct_pb2
from modelplane.pipeline.composition import plain, to_dict
from modelplane.pipeline.structs import to_plain
from modelplane.render.engine import _data
from modelplane.render.reader import jsonify

OBJECT = {
    "apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment",
    "metadata": {"name": "chat", "labels": {"a": "b"}, "annotations": {}},
    "spec": {"replicas": 3, "ratio": 0.25, "enabled": True, "off": False, "nothing": None, "empty": "",
             "list": [1, "two", [3.5, {"four": 4}], {}, []], "big": 2**60, "negative": -7},
}


def _struct(obj: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(obj)
    return s


def test_same_values_and_key_order_as_the_sdk():
    s = _struct(OBJECT)
    assert json.dumps(_data(s)) == json.dumps(jsonify(resource.struct_to_dict(s)))
    assert json.dumps(to_dict(s)) == json.dumps(plain(resource.struct_to_dict(s)))
    assert to_dict(s)["spec"]["replicas"] == 3 and isinstance(to_dict(s)["spec"]["replicas"], int)
    assert to_dict(s)["spec"]["ratio"] == 0.25


def test_integers_only_within_the_range_asked_for():
    s = _struct({"at": 2.0**53, "below": 2.0**53 - 1, "int64": -(2.0**63), "over": 2.0**63, "half": 1.5})
    safe = to_plain(s, -(2**53) + 1, 2**53)
    assert isinstance(safe["below"], int) and isinstance(safe["at"], float)
    int64 = to_plain(s, -(2**63), 2**63)
    assert int64["int64"] == -(2**63) and isinstance(int64["int64"], int)
    assert isinstance(int64["over"], float) and int64["half"] == 1.5
