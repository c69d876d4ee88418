"""The simulated API server and the statuses a healthy fleet reports."""
from __future__ import annotations

from modelplane.simulate import addresses, health
from modelplane.simulate.world import World, timestamp


def _xr(kind: str, name: str, ns: str = "", **spec) -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


def test_apply_assigns_uid_and_creation_time_in_order_and_keeps_them_on_update():
    world = World()
    a = world.apply(_xr("ModelDeployment", "a", "ns", replicas=1))
    b = world.apply(_xr("ModelDeployment", "b", "ns", replicas=1))
    first = dict(world.xrs[a].obj["metadata"])
    assert first["creationTimestamp"] < world.xrs[b].obj["metadata"]["creationTimestamp"]
    world.xrs[a].obj["status"] = {"replicas": {"desired": 1}}
    world.apply(_xr("ModelDeployment", "a", "ns", replicas=3))
    obj = world.xrs[a].obj
    assert obj["metadata"]["uid"] == first["uid"]
    assert obj["metadata"]["creationTimestamp"] == first["creationTimestamp"]
    assert obj["spec"] == {"replicas": 3} and obj["status"] == {"replicas": {"desired": 1}}


def test_delete_removes_everything_the_xr_composed():
    world = World()
    parent = world.apply(_xr("ModelDeployment", "a", "ns"))
    child = world.apply(_xr("ModelReplica", "a-0-c", "ns"), parent=parent)
    world.apply(_xr("ModelEndpoint", "a-0-c", "ns"), parent=child)
    world.apply(_xr("ModelService", "s", "ns"))
    world.delete(parent)
    assert [k[0] for k in world.ordered()] == ["ModelService"]


def test_order_puts_what_others_read_first():
    world = World()
    for kind in ("ModelService", "ModelDeployment", "InferenceCluster", "InferenceClass"):
        world.apply(_xr(kind, "x", "" if kind.startswith("Inference") else "ns"))
    assert [k[0] for k in world.ordered()] == ["InferenceClass", "InferenceCluster", "ModelDeployment", "ModelService"]


def test_addresses_come_from_documentation_ranges_without_a_ceiling():
    book = health.AddressBook()
    assert book.address("a") == "203.0.113.10"
    assert book.address("b") == "203.0.113.11"
    assert book.address("a") == "203.0.113.10"
    assert addresses.nth(244) == "203.0.113.254"
    assert addresses.nth(245) == "198.18.0.1"
    assert addresses.nth(245 + 131069) == "198.19.255.254"
    assert addresses.nth(245 + 131070) == "2001:db8::1"
    assert len({addresses.nth(n) for n in range(0, 300_000, 7)}) == len(range(0, 300_000, 7))


def test_an_update_that_changes_nothing_is_not_a_change():
    world = World()
    heard = []
    world.listeners.append(lambda key, before, after, parent: heard.append((key, before is None, after is None)))
    key = world.apply(_xr("ModelDeployment", "a", "ns", replicas=1))
    world.apply(_xr("ModelDeployment", "a", "ns", replicas=1))
    assert world.set_status(key, {"x": 1}) and not world.set_status(key, {"x": 1})
    world.delete(key)
    assert heard == [(key, True, False), (key, False, False), (key, False, True)]


def test_only_objects_applied_from_outside_move_the_clock():
    world = World()
    parent = world.apply(_xr("ModelDeployment", "a", "ns"))
    world.apply(_xr("ModelReplica", "a-0-c", "ns"), parent=parent)
    assert world.clock == 1
    assert world.xrs[("ModelReplica", "ns", "a-0-c")].obj["metadata"]["creationTimestamp"] == timestamp(1)


def test_the_store_selects_what_render_selects_and_wakes_only_matching_readers():
    from crossplane.function.proto.v1 import run_function_pb2 as fnv1
    from modelplane.render.fetch import Fetcher
    from modelplane.simulate.store import Selector, Store, Watches

    objs = [_xr("ModelReplica", f"r{i}", ns, placement=[]) for i, ns in enumerate(("a", "b", "a"))]
    for i, o in enumerate(objs):
        o["metadata"]["labels"] = {"modelplane.ai/cluster": f"c{i % 2}"}
    objs.append(_xr("InferenceGateway", "default"))
    store = Store()
    for o in objs:
        store.put((o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]), o)
    selectors = [
        fnv1.ResourceSelector(api_version="modelplane.ai/v1alpha1", kind="ModelReplica",
                              match_labels=fnv1.MatchLabels(labels={"modelplane.ai/cluster": "c0"})),
        fnv1.ResourceSelector(api_version="modelplane.ai/v1alpha1", kind="ModelReplica", match_name="r1"),
        fnv1.ResourceSelector(api_version="modelplane.ai/v1alpha1", kind="ModelReplica", match_name="r1", namespace="b"),
        fnv1.ResourceSelector(api_version="modelplane.ai/v1alpha1", kind="InferenceGateway", match_name="default"),
    ]
    for sel in selectors:
        for ns in ("a", "b", ""):
            want = Fetcher(objs, strict_namespace=True, xr_namespace=ns).fetch(sel)
            assert store.fetch(Selector.of(sel), ns) == want, (sel, ns)
    watches = Watches()
    watches.record(("InferenceCluster", "", "c0"), [(Selector.of(selectors[0]), "")])
    watches.record(("ModelService", "a", "s"), [(Selector.of(selectors[3]), "a")])
    assert watches.readers(objs[0]) == {("InferenceCluster", "", "c0")}
    assert watches.readers(objs[1]) == set()
    assert watches.readers(objs[3]) == {("ModelService", "a", "s")}


def test_fast_yaml_reads_every_example_as_render_does():
    from modelplane import paths
    from modelplane.render import reader

    files = sorted(paths.EXAMPLES.rglob("*.yaml"))
    assert len(files) > 20
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert reader.load_all_fast(text) == reader.load_all(text), f
    tricky = "a: y\nb: 1e3\nc: 0o17\nd: 2026-01-01\ne: ~\n"
    assert reader.load_all_fast(tricky) == reader.load_all(tricky)
