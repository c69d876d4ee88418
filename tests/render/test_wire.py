"""A request assembled from wire bytes is the request built field by field."""
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from modelplane.render.engine import RenderInputs, _Run
from modelplane.render.fetch import as_struct
from modelplane.render.finish import ANNOTATION_RESOURCE_NAME
from modelplane.render.runners import FunctionPool
from modelplane.render.wire import (
    EXTRA_RESOURCES,
    REQUIRED_RESOURCES,
    WireRequest,
    field,
    map_entry,
    map_entry_parts,
    varint,
)


def _resources(*names: str) -> fnv1.Resources:
    return fnv1.Resources(items=[fnv1.Resource(resource=as_struct(
        {"kind": "InferenceCluster", "metadata": {"name": n, "labels": {"x": "y" * 200}}})) for n in names])


def test_varint_and_field_match_protobuf():
    for n in (0, 1, 127, 128, 300, 16_383, 16_384, 70_000):
        text = "a" * n
        # Value.string_value is field 3: exactly one length-delimited field.
        assert struct_pb2.Value(string_value=text).SerializeToString() == field(3, text.encode())
    assert varint(300) == b"\xac\x02"
    assert varint(2**35) == b"\x80\x80\x80\x80\x80\x01"


def test_wire_request_equals_the_message_built_by_copying():
    base = fnv1.RunFunctionRequest()
    base.observed.composite.resource.update({"kind": "ModelDeployment", "metadata": {"name": "m"}})
    base.input.update({"a": 1})
    clusters, caches, empty = _resources(*(f"c{i}" for i in range(50))), _resources("cache"), fnv1.Resources()

    want = fnv1.RunFunctionRequest()
    want.CopyFrom(base)
    want.required_resources["clusters"].CopyFrom(clusters)
    want.required_resources["none"].CopyFrom(empty)
    want.extra_resources["cache"].CopyFrom(caches)

    got = WireRequest(base, [map_entry(REQUIRED_RESOURCES, "clusters", clusters.SerializeToString()),
                             map_entry(REQUIRED_RESOURCES, "none", b""),
                             map_entry(EXTRA_RESOURCES, "cache", caches.SerializeToString())]).message()
    assert got == want
    # "Looked up, none found" keeps its key.
    assert "none" in got.required_resources and len(got.required_resources["none"].items) == 0


def test_map_entry_parts_join_to_the_map_entry():
    value = _resources("a", "b").SerializeToString()
    header, same = map_entry_parts(REQUIRED_RESOURCES, "clusters", value)
    assert same is value   # the megabytes are not copied into the header
    assert header + same == map_entry(REQUIRED_RESOURCES, "clusters", value)


def test_observed_bytes_are_the_state_built_resource_by_resource():
    # The same message; its maps' entries in the order a State built resource by resource (in
    # observed order, each Struct built from its dict) serialises them.
    xr = {"apiVersion": "x/v1", "kind": "XR", "metadata": {"name": "m", "labels": {"a": "b"}}, "status": {"n": 1}}
    observed = [{"kind": "Object", "metadata": {"name": f"o{i}", "annotations": {ANNOTATION_RESOURCE_NAME: f"r{i}"}},
                 "spec": {"i": i}} for i in (5, 1, 30, 12, 7, 2, 19, 3)]
    run = _Run(RenderInputs(xr=xr, composition={}, functions=[], observed=observed), FunctionPool())
    want = fnv1.State()
    want.composite.resource.update(xr)
    for obj in observed:
        want.resources[obj["metadata"]["annotations"][ANNOTATION_RESOURCE_NAME]].resource.update(obj)
    assert fnv1.State.FromString(run.observed_wire()) == want
    assert run.observed_wire() == want.SerializeToString()
