"""The simulator's caches give what converting afresh gives, and let go when their inputs change."""
import gc

from modelplane.render.fetch import as_struct
from modelplane.simulate.codec import CachingCodec
from modelplane.simulate.heap import collector_paused
from modelplane.simulate.store import Selector, Store

API = "modelplane.ai/v1alpha1"


def _cluster(name: str, status: dict | None = None) -> dict:
    obj = {"apiVersion": API, "kind": "InferenceCluster", "metadata": {"name": name, "labels": {"r": "eu"}},
           "spec": {"nodePools": [{"name": "a", "class": "h100-8x", "nodeCount": 2}]}}
    if status is not None:
        obj["status"] = status
    return obj


def test_encoding_gives_the_sdks_bytes_and_struct():
    codec = CachingCodec()
    before = _cluster("c1", {"pools": [{"name": "a", "free": 3}]})
    assert codec.encode_wire(before) == as_struct(before).SerializeToString()
    after = {**before, "status": {"pools": [{"name": "a", "free": 1}]}}   # as World.set_status writes
    assert codec.encode_wire(after) == as_struct(after).SerializeToString()
    assert codec.encode(after) == as_struct(after)


def test_forgotten_objects_are_encoded_again():
    codec = CachingCodec()
    obj = _cluster("c1")
    codec.encode_wire(obj)
    codec.encode_wire(obj)
    assert (codec.hits, codec.misses) == (1, 1)
    codec.forget(obj)
    codec.encode_wire(obj)
    assert codec.misses == 2


def test_encoded_bytes_are_bounded_and_a_full_cache_keeps_what_it_has():
    objs = [_cluster(f"c{i}") for i in range(4)]
    size = len(CachingCodec().encode_wire(objs[0]))
    codec = CachingCodec(encoded_bytes=3 * size)        # room for three clusters' bytes (names are as long)
    for obj in objs:
        assert codec.encode_wire(obj) == as_struct(obj).SerializeToString()
    assert (codec.hits, codec.misses) == (0, 4)
    for obj in objs:                                      # the fourth found no room: encoded again
        assert codec.encode_wire(obj) == as_struct(obj).SerializeToString()
    assert (codec.hits, codec.misses) == (3, 5)
    codec.forget(objs[1])
    codec.forget(objs[1])                                 # twice: the count of bytes kept stays right
    codec.encode_wire(objs[3])                            # room again
    codec.encode_wire(objs[3])
    assert (codec.hits, codec.misses) == (4, 6)
    assert codec._encoded_bytes == sum(len(w) for _, w in codec._encoded.values()) <= 3 * size


def test_a_selector_answer_is_kept_until_an_object_of_its_kind_changes():
    store = Store()
    for i in range(3):
        store.put(("InferenceCluster", "", f"c{i}"), _cluster(f"c{i}"))
    store.put(("ModelReplica", "ns", "r"), {"apiVersion": API, "kind": "ModelReplica",
                                           "metadata": {"name": "r", "namespace": "ns"}})
    every = Selector(api_version=API, kind="InferenceCluster")
    first = store.fetch_wire(every, "ns")
    assert store.fetch_wire(every, "ns") is first
    assert store.fetch(every, "ns").items[0].resource == as_struct(_cluster("c0"))
    # Another kind changing leaves the answer as it was.
    store.put(("ModelReplica", "ns", "r"), {"apiVersion": API, "kind": "ModelReplica",
                                           "metadata": {"name": "r", "namespace": "ns", "labels": {"a": "b"}}})
    assert store.fetch_wire(every, "ns") is first
    # A cluster's status changing changes the answer.
    store.put(("InferenceCluster", "", "c1"), _cluster("c1", {"pools": []}))
    changed = store.fetch(every, "ns")
    assert changed.items[1].resource == as_struct(_cluster("c1", {"pools": []}))
    assert store.fetch_wire(every, "ns") is not first
    store.remove(("InferenceCluster", "", "c2"), _cluster("c2"))
    assert len(store.fetch(every, "ns").items) == 2


def test_the_collector_is_paused_only_inside_and_only_when_nobody_else_froze():
    assert gc.get_freeze_count() == 0
    thresholds = gc.get_threshold()
    with collector_paused() as between_waves:
        kept = [{"n": i} for i in range(1000)]
        between_waves()
        assert gc.get_freeze_count() >= len(kept)
        assert gc.get_threshold()[2] >= 1000
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == thresholds
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused() as between_waves:
            between_waves()
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen   # the caller's arrangement is the caller's
    finally:
        gc.unfreeze()


def test_decoding_gives_renders_dicts_in_the_same_key_order_with_strings_shared():
    from modelplane.render.engine import _data
    from modelplane.simulate.codec import plain

    doc = {"b": 1, "a": [1.5, 2**40, -3, True, None, {"z": "True", "y": {}}], "c": {"k": "v" * 100, "e": []},
           "big": 2.0**70, "name": "cluster-0001"}
    struct = as_struct(doc)
    got, want = plain(struct), _data(struct)
    assert got == want
    assert list(got) == list(want) and list(got["c"]) == list(want["c"])
    assert [type(x) for x in got["a"]] == [type(x) for x in want["a"]]
    again = plain(as_struct(doc))
    assert again["name"] is got["name"]           # short strings and keys are shared
    assert next(iter(again["c"])) is next(iter(got["c"]))
    assert CachingCodec().decode(struct) == want
