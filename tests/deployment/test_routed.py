"""The routed backends read from wire bytes are what the dict reading gives, for any ModelService list."""
from __future__ import annotations

import pytest
from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane.deployment import routed
from modelplane.deployment.inputs import read_routed, read_routed_items
from modelplane.pipeline.received import Items

NAMES = st.sampled_from(["a", "b", "team-a/x", ""])
NAMESPACE = st.one_of(st.none(), st.sampled_from(["team-a", "team-b", ""]), st.integers(0, 3))
BACKENDS = st.one_of(st.none(), st.lists(st.one_of(NAMES, st.integers(0, 2), st.none()), max_size=4), NAMES)


@st.composite
def services(draw) -> dict:
    svc: dict = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelService"}
    meta = draw(st.sampled_from(["absent", "no namespace", "namespace", "null"]))
    if meta == "no namespace":
        svc["metadata"] = {"name": "s"}
    elif meta == "namespace":
        svc["metadata"] = {"name": "s", "namespace": draw(NAMESPACE)}
    elif meta == "null":
        svc["metadata"] = None
    status = draw(st.sampled_from(["absent", "empty", "routes"]))
    if status == "empty":
        svc["status"] = {}
    elif status == "routes":
        svc["status"] = {"routedBackends": draw(BACKENDS), "other": [1, 2]}
    return svc


def wire(svc: dict) -> bytes:
    return fnv1.Resource(resource=resource.dict_to_struct(svc)).SerializeToString()


def plain(svc: dict) -> dict:
    """What a dict read from the Struct holds (numbers are floats in a Struct)."""
    return resource.struct_to_dict(resource.dict_to_struct(svc))


@settings(max_examples=300)
@given(st.lists(services(), max_size=6), st.sampled_from(["team-a", "team-b"]))
def test_wire_reading_is_the_dict_reading(svcs: list[dict], namespace: str) -> None:
    assert read_routed_items([wire(s) for s in svcs], namespace) == read_routed([plain(s) for s in svcs], namespace)


def test_only_the_namespace_and_unnamed_services_count() -> None:
    svcs = [{"metadata": {"namespace": "team-a"}, "status": {"routedBackends": ["a-0"]}},
            {"metadata": {"namespace": "team-b"}, "status": {"routedBackends": ["b-0"]}},
            {"metadata": {"name": "no-namespace"}, "status": {"routedBackends": ["c-0", 3]}},
            {"status": {"routedBackends": "not-a-list"}}]
    assert read_routed_items([wire(s) for s in svcs], "team-a") == {"a-0", "c-0"}
    assert read_routed_items([wire(s) for s in svcs], "team-b") == {"b-0", "c-0"}
    assert read_routed_items(None, "team-a") == frozenset()


def test_an_entry_seen_whole_answers_per_namespace_from_its_version() -> None:
    items = Items([wire({"metadata": {"namespace": "team-a"}, "status": {"routedBackends": ["a-0"]}})])
    items.version = 10**9 + 7   # unique within the process
    first = read_routed_items(items, "team-a")
    assert first == {"a-0"} and read_routed_items(items, "team-b") == frozenset()
    # the same version answers without reading the items again (they are never changed in place)
    items.append(b"\xff")
    assert read_routed_items(items, "team-a") is first
    with pytest.raises(ValueError, match="required resource 'services' could not be decoded"):
        read_routed_items(list(items), "team-a")


def test_the_same_bytes_are_read_once() -> None:
    item = wire({"metadata": {"namespace": "team-c"}, "status": {"routedBackends": ["once"]}})
    misses = routed._ITEMS.misses
    assert read_routed_items([item], "team-c") == {"once"}
    assert read_routed_items([item, bytes(item)], "team-c") == {"once"}
    assert routed._ITEMS.misses - misses == 1
