"""modelplane.pipeline.received: the server's own split of a request's wire bytes matches protobuf's decoding."""
from __future__ import annotations

import gc
import weakref

import pytest
from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.message import DecodeError
from modelplane.pipeline import received as received_module
from modelplane.pipeline.composition import Composition
from modelplane.pipeline.received import REQUIRED_RESOURCES, Items, Received, receive
from modelplane.pipeline.server import Undecodable, decode_request
from modelplane.pipeline.structwire import varint


def _cluster(name: str, gpus: int) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": {"name": name},
            "status": {"pools": [{"name": "h100", "nodes": 2, "allocations": [{"replica": "r", "count": gpus}]}]}}


def _request() -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update({"apiVersion": "v1", "kind": "X", "metadata": {"name": "x"}})
    for name in ("c1", "c2", "c3"):
        req.required_resources["clusters"].items.add().resource.update(_cluster(name, len(name)))
    req.required_resources["empty"].SetInParent()
    req.required_resources["classes"].items.add(ready=fnv1.READY_TRUE).resource.update({"kind": "InferenceClass"})
    req.context.update({"modelplane.ai/now": "2026-01-01T00:00:00Z"})
    req.extra_resources["legacy"].items.add().resource.update({"kind": "Old"})
    return req


def _decoded(received: Received) -> fnv1.RunFunctionRequest:
    """The request the split stands for: its message with the required items put back."""
    out = fnv1.RunFunctionRequest()
    out.CopyFrom(received.message)
    for name, items in received.required.items():
        out.required_resources[name].SetInParent()
        for item in items:
            out.required_resources[name].items.append(fnv1.Resource.FromString(item))
    return out


def test_split_request_is_the_request():
    req = _request()
    received = receive(req.SerializeToString())
    assert not received.message.required_resources          # set aside, not decoded
    assert sorted(received.required) == ["classes", "clusters", "empty"]
    assert received.required["empty"] == []                   # answered with nothing: still answered
    assert _decoded(received) == req
    assert received.message.extra_resources["legacy"].items[0].resource["kind"] == "Old"


def test_structs_decode_on_first_read_and_keep_order():
    received = receive(_request().SerializeToString())
    structs = received.structs("clusters")
    assert [resource.struct_to_dict(s)["metadata"]["name"] for s in structs] == ["c1", "c2", "c3"]
    assert received.structs("clusters") is structs
    assert received.structs("absent") is None


def test_a_map_entry_sent_twice_keeps_the_last_and_a_split_value_merges():
    first = fnv1.RunFunctionRequest()
    first.required_resources["clusters"].items.add().resource.update({"n": 1})
    second = fnv1.RunFunctionRequest()
    second.required_resources["clusters"].items.add().resource.update({"n": 2})
    wire = first.SerializeToString() + second.SerializeToString()
    assert _decoded(receive(wire)) == fnv1.RunFunctionRequest.FromString(wire)

    # One entry whose value field arrives in two pieces: protobuf merges them (the items append).
    a, b = fnv1.Resources(), fnv1.Resources()
    a.items.add().resource.update({"n": 1})
    b.items.add().resource.update({"n": 2})
    key = b"\x0a\x08clusters"
    value = b"\x12" + bytes([len(a.SerializeToString())]) + a.SerializeToString()
    value += b"\x12" + bytes([len(b.SerializeToString())]) + b.SerializeToString()
    entry = key + value
    wire = bytes([REQUIRED_RESOURCES << 3 | 2, len(entry)]) + entry
    received = receive(wire)
    assert [resource.struct_to_dict(s)["n"] for s in received.structs("clusters")] == [1, 2]
    assert _decoded(received) == fnv1.RunFunctionRequest.FromString(wire)


def test_truncated_bytes_fail_as_protobuf_does():
    wire = _request().SerializeToString()
    with pytest.raises(DecodeError):
        receive(wire[:-3])
    assert isinstance(decode_request(wire[:-3]), Undecodable)


def test_composition_reads_wire_and_structs_alike():
    req = _request()
    for source in (req, receive(req.SerializeToString())):
        c = Composition(source, fnv1.RunFunctionResponse(), "test")
        assert c.fetched("clusters") and c.fetched("empty") and c.fetched("legacy") and not c.fetched("absent")
        assert c.required("empty") == []
        assert c.required_wire("absent") is None
        wire = c.required_wire("clusters")
        assert [fnv1.Resource.FromString(w) for w in wire] == list(req.required_resources["clusters"].items)
        assert [d["metadata"]["name"] for d in c.required("clusters")] == ["c1", "c2", "c3"]
        assert c.required("classes") == [{"kind": "InferenceClass"}]


def test_an_item_that_does_not_decode_is_an_input_error():
    from modelplane.errors import InputError

    received = Received(fnv1.RunFunctionRequest(), {"clusters": [b"\x0a\xff"]})
    c = Composition(received, fnv1.RunFunctionResponse(), "test")
    assert c.fetched("clusters")
    with pytest.raises(InputError, match="requirements"):
        c.required("clusters")


# --- an entry seen again ---------------------------------------------------------------------


def test_an_entry_brought_again_is_answered_with_the_same_items(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(received_module, "RECENT", received_module._Recent())
    monkeypatch.setattr(received_module, "KEPT_FROM_BYTES", 0)  # these entries are tiny
    req = _request()
    first = receive(req.SerializeToString())
    req.context.update({"modelplane.ai/now": "2026-01-01T00:00:10Z"})  # another call, same clusters
    again = receive(req.SerializeToString())
    assert again.required["clusters"] is first.required["clusters"]
    assert again.required["clusters"].version == first.required["clusters"].version > 0
    assert _decoded(again) == req                                    # and it is still the request
    req.required_resources["clusters"].items[1].resource["metadata"]["name"] = "c9"   # same length, one byte
    changed = receive(req.SerializeToString())
    assert changed.required["clusters"].version != first.required["clusters"].version
    assert _decoded(changed) == req


def test_kept_entries_are_bounded_by_count_and_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    recent = received_module._Recent()
    monkeypatch.setattr(received_module, "RECENT", recent)
    monkeypatch.setattr(received_module, "KEPT_BYTES", 1000)
    for size in (100, 200, 300, 400, 500, 2000):
        recent.keep(b"x" * size, "k", received_module.Items())
        assert sum(len(w) for w, _, _ in recent._entries.values()) <= max(1000, size)
        assert len(recent._entries) <= received_module.KEPT_ENTRIES
    assert list(recent._entries) == [2000]   # the newest is kept even alone over the budget
    assert recent.find(b"y" * 2000, 0, 2000) is None       # same length, other bytes: not a hit


def test_small_entries_are_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # A namespace's ModelServices are cheap to split; kept, one per namespace, they would push out the clusters.
    monkeypatch.setattr(received_module, "RECENT", received_module._Recent())
    req = _request()
    big = req.required_resources["clusters"]
    while big.ByteSize() < received_module.KEPT_FROM_BYTES:
        big.items.add().resource.update(_cluster(f"c{len(big.items)}", 1))
    first, again = receive(req.SerializeToString()), receive(req.SerializeToString())
    assert again.required["clusters"] is first.required["clusters"]
    assert again.required["classes"] is not first.required["classes"]
    assert [len(w) for w, _, _ in received_module.RECENT._entries.values()] == [
        len(_entry_bytes(req, "clusters"))]
    assert _decoded(again) == req


def _entry_bytes(req: fnv1.RunFunctionRequest, key: str) -> bytes:
    one = fnv1.RunFunctionRequest()
    one.required_resources[key].CopyFrom(req.required_resources[key])
    wire = one.SerializeToString()
    # the field's tag and length, then the entry: what the decoder compares
    _, i = received_module._varint(memoryview(wire), 1, len(wire))
    return wire[i:]


def test_what_is_derived_from_items_is_made_once_per_key_and_lives_with_them() -> None:
    class Derived:
        pass

    made: list[str] = []
    items = Items([b"a", b"b"])

    def make(key: str):
        return lambda whole: made.append(key) or Derived()

    first = items.derived("fleet", make("fleet"))
    assert items.derived("fleet", make("fleet")) is first and made == ["fleet"]
    assert items.derived("other", make("other")) is not first and made == ["fleet", "other"]
    # equal items of another request are other items: derived anew
    assert Items(items).derived("fleet", make("fleet")) is not first
    gone = weakref.ref(first)
    del items, first
    gc.collect()
    assert gone() is None   # nothing outside the items keeps it


# --- an entry that differs from the last one in a few items -----------------------------------


def _clusters_request(gpus: dict[str, int]) -> bytes:
    req = _request()
    del req.required_resources["clusters"]
    for name, count in gpus.items():
        req.required_resources["clusters"].items.add().resource.update(_cluster(name, count))
    return req.SerializeToString()


def test_a_changed_entry_names_the_items_that_differ_from_the_last_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(received_module, "RECENT", received_module._Recent())
    monkeypatch.setattr(received_module, "KEPT_FROM_BYTES", 0)
    fleet = {f"c{i}": 1 for i in range(6)}
    first = receive(_clusters_request(fleet)).required["clusters"]
    assert first.earlier("fleet") is None                     # nothing was kept before it
    derived = first.derived("fleet", lambda items: ["read from", items.version])
    second = receive(_clusters_request({**fleet, "c1": 2, "c4": 3})).required["clusters"]
    assert second.earlier("fleet") == (derived, (1, 4))       # the others are byte for byte the same
    assert second.earlier("other") is None                    # nothing derived under that key
    third = receive(_clusters_request({**fleet, "c1": 2, "c4": 3, "c5": 9})).required["clusters"]
    assert third.earlier("fleet") is None                     # the second derived nothing
    second.derived("fleet", lambda items: "second")
    assert third.earlier("fleet") == ("second", (5,))         # derived since: found through the third
    fourth = receive(_clusters_request({**fleet, "c1": 2, "c4": 3, "c5": 9})).required["clusters"]
    assert fourth is third                                    # equal bytes: the same items, as before


def test_entries_that_do_not_line_up_name_no_earlier_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(received_module, "RECENT", received_module._Recent())
    monkeypatch.setattr(received_module, "KEPT_FROM_BYTES", 0)
    fleet = {f"c{i}": 1 for i in range(6)}
    receive(_clusters_request(fleet)).required["clusters"].derived("fleet", lambda items: "first")
    longer = receive(_clusters_request({**fleet, "c6": 1})).required["clusters"]
    assert longer.earlier("fleet") is None                    # one item more: no index is the same cluster
    longer.derived("fleet", lambda items: "longer")
    req = fnv1.RunFunctionRequest.FromString(_clusters_request(fleet))
    twice = fnv1.Resources()
    twice.items.add().resource.update(_cluster("c9", 1))
    # the value field twice in one entry: protobuf merges them (items append)
    entry = fnv1.RunFunctionRequest.RequiredResourcesEntry(key="clusters", value=req.required_resources["clusters"])
    extra = fnv1.RunFunctionRequest.RequiredResourcesEntry(value=twice).SerializeToString()
    wire = entry.SerializeToString() + extra
    merged = receive(_field(REQUIRED_RESOURCES, wire)).required["clusters"]
    assert len(merged) == 7 and merged.earlier("fleet") is None


def _field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def test_an_earlier_entry_is_not_kept_alive_by_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(received_module, "RECENT", received_module._Recent())
    monkeypatch.setattr(received_module, "KEPT_FROM_BYTES", 0)
    first = receive(_clusters_request({"c1": 1, "c2": 1})).required["clusters"]
    first.derived("fleet", lambda items: "first")
    gone = weakref.ref(first)
    second = receive(_clusters_request({"c1": 2, "c2": 1})).required["clusters"]   # same length: replaces it
    del first
    gc.collect()
    assert gone() is None and second.earlier("fleet") == ("first", (0,))
    second.derived("fleet", lambda items: "second")
    assert second.earlier("fleet") is None   # once derived, what the earlier entry gave is let go
