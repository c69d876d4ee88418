"""Held versus evicted, through compose-model-deployment.

Held (cluster or class not observed, cluster NotReady, or a class edited so
that it no longer satisfies a running replica's selectors): every child
stays. Evicted (lost its place): out of routing first, deleted on a later call.
The small fleet loop at the end plays the control plane for a few
deployments and one InferenceCluster: each round renders every deployment,
turns its desired children into observed ones (Ready, routed) and rebuilds
the cluster's ``status.pools`` allocations from the ModelReplicas that
exist, as compose-inference-cluster does; at the fixed point no pool holds
more devices than it has.
"""
from __future__ import annotations

import copy

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.functions.deployments import (
    CLASSES,
    H100,
    L4,
    NS,
    QWEN_DEMO,
    call,
    cluster,
    deployment,
    inputs,
    observe,
    pool_status,
)
from tests.support import conditions, desired, status


def _five_gpus(name: str, created: str, **spec) -> dict:
    """A 1-replica deployment of one engine with 5 copies of a 1-GPU member."""
    xr = deployment(QWEN_DEMO, **spec)
    xr["metadata"]["name"] = name
    xr["metadata"]["creationTimestamp"] = created
    xr["spec"]["engines"][0]["copies"] = 5
    xr["spec"]["engines"][0]["members"][0]["nodeSelector"]["devices"][0]["selectors"] = []
    return xr


def _routed(xr: dict, clusters: list[dict]) -> dict:
    """Place ``xr`` and bring it to Ready and routed."""
    observed = observe(call(xr, inputs(*clusters)), url=True, ready=True)
    return observe(call(xr, inputs(*clusters), observed), url=True, ready=True)


# --- held: nothing dropped ------------------------------------------------------

SOLO = [cluster("solo", ("gpu", H100, 1))]


@pytest.mark.parametrize("name,required", [
    ("clusters not fetched", {"classes": CLASSES}),
    ("cluster has not published pools", {"clusters": [{**SOLO[0], "status": {"conditions": []}}], "classes": CLASSES}),
    ("cluster NotReady, its pool reporting no nodes", inputs(cluster("solo", ("gpu", H100, 0), ready=False))),
    ("the pool's class is not observed", {"clusters": SOLO, "classes": []}),
    ("no InferenceCluster listed at all (not read as all deleted)", {"clusters": [], "classes": CLASSES}),
])
def test_held_replicas_keep_every_child(name, required):
    xr = _five_gpus("a", "2026-01-01T00:00:00Z")
    observed = _routed(xr, SOLO)
    assert sorted(observed) == ["endpoint-0-solo", "replica-0-solo"]
    rsp = call(xr, required, observed)
    assert sorted(desired(rsp)) == sorted(observed)
    assert (status(rsp).get("removals") or []) == []
    assert desired(rsp)["replica-0-solo"]["metadata"].get("annotations") is None


# --- evicted: each cause, drained first ------------------------------------------


def _alloc(deployment: str, replica: str, order: str, gpus: int) -> dict:
    return {"replica": replica, "deployment": deployment, "order": order,
            "pods": [{"count": gpus, "devices": {"gpu": 1}, "gang": False}]}


EVICTIONS = [
    ("overcommitted behind an earlier admission",
     [cluster("solo", ("gpu", H100, 1), allocations={"gpu": [
         _alloc(f"{NS}/older", f"{NS}/older-0-solo", "2025-01-01T00:00:00Z/ml-team/older/00000", 5)]})],
     "overcommitted: no longer fits behind replicas admitted earlier"),
    ("NoExecute taint", [cluster("solo", ("gpu", H100, 1), taints=[{"key": "drain", "effect": "NoExecute"}])],
     "NoExecute taint drain"),
    ("the pool now names a smaller class that fails the selector too",
     [cluster("solo", ("gpu", L4, 1))],  # a 1-GPU node: the 5 pods it holds no longer fit
     "overcommitted: no longer fits behind replicas admitted earlier"),
    ("cluster deleted", [cluster("other", ("gpu", L4, 1))], "cluster solo no longer exists"),
]


@pytest.mark.parametrize("name,clusters,reason", EVICTIONS, ids=[e[0] for e in EVICTIONS])
def test_evicted_replica_leaves_routing_then_is_deleted(name, clusters, reason):
    xr = _five_gpus("a", "2026-01-01T00:00:00Z")
    if "class" in name:
        # Ask for 40Gi GPUs: the L4 class (24Gi) now behind the pool no longer matches.
        xr["spec"]["engines"][0]["members"][0]["nodeSelector"]["devices"][0]["selectors"] = [
            {"cel": 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'}]
    observed = _routed(xr, SOLO)
    rsp = call(xr, inputs(*clusters), observed)
    # Out of routing (its endpoint kept, annotated), still holding its devices.
    assert sorted(desired(rsp)) == ["endpoint-0-solo", "replica-0-solo"]
    [removal] = status(rsp)["removals"]
    assert (removal["cause"], removal["phase"], removal["name"]) == ("Evicted", "Draining", "a-0-solo")
    assert removal["reason"] == reason
    assert status(rsp)["replicas"]["scheduled"] == 0
    rsp = call(xr, inputs(*clusters), observe(rsp, url=True, ready=True))
    assert desired(rsp) == {}


# --- a class corrected under running replicas: held, reported, nothing moves -----------------

MEM_80GI = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0'
MEM_79GI = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("79Gi")) >= 0'


def _h100_classes(memory: str) -> list[dict]:
    """The example classes with the H100's GPU memory set to ``memory``."""
    out = copy.deepcopy(CLASSES)
    for c in out:
        if c["metadata"]["name"] == H100:
            next(d for d in c["spec"]["devices"] if d["name"] == "gpu")["capacity"]["memory"]["value"] = memory
    return out


def _selecting(selector: str) -> dict:
    xr = _five_gpus("a", "2026-01-01T00:00:00Z")
    xr["spec"]["engines"][0]["members"][0]["nodeSelector"]["devices"][0]["selectors"] = [{"cel": selector}]
    return xr


def test_a_class_corrected_below_a_running_selector_holds_the_replica_and_says_why():
    # What NVIDIA's DRA driver publishes for an H100 80GB HBM3 (81559Mi) is less than 80Gi.
    xr = _selecting(MEM_80GI)
    before = {"clusters": [pool_status(cluster("solo", ("gpu", H100, 2)), [])], "classes": _h100_classes("80Gi"),
              "services": []}
    observed = observe(call(xr, before), url=True, ready=True)
    observed = observe(call(xr, before, observed), url=True, ready=True)
    replica = observed["replica-0-solo"]
    after = {**before, "classes": _h100_classes("81559Mi")}
    rsp = call(xr, after, observed)
    # Nothing leaves, nothing is rebuilt: the ModelReplica is desired exactly as it was.
    assert sorted(desired(rsp)) == ["endpoint-0-solo", "replica-0-solo"]
    assert desired(rsp)["replica-0-solo"]["spec"] == replica["spec"]
    assert status(rsp)["removals"] == [] and status(rsp)["replicas"]["ready"] == 1
    cond = conditions(rsp)["Scheduled"]
    assert (cond.status, cond.reason) == (fnv1.STATUS_CONDITION_TRUE, "Scheduled")
    assert cond.message == (
        "1/1 replicas placed; replica 0 held on solo (pool gpu of class h100-8x-ib no longer matches request "
        f'"gpu" (device gpu: selector 1 false: {MEM_80GI}); it keeps running on the devices it holds, '
        "new replicas are not placed there: update the selector or the class)")
    # The selector edited to the margin is a new revision: its replica goes on the corrected
    # class (the second node) while the held one, now of the older revision, serves until the
    # rollout retires it; nothing is reported held any more.
    fixed = _selecting(MEM_79GI)
    rsp = call(fixed, after, observe(rsp, url=True, ready=True))
    assert sorted(desired(rsp)) == ["endpoint-0-solo", "replica-0-solo", "replica-1-solo"]
    assert conditions(rsp)["Scheduled"].message == "1/1 replicas placed"
    assert "1 of older revisions left" in conditions(rsp)["Progressing"].message


def test_an_evicted_replica_that_never_routed_is_deleted_at_once():
    xr = _five_gpus("a", "2026-01-01T00:00:00Z")
    observed = observe(call(xr, inputs(*SOLO)), url=True)  # not Ready: no endpoint yet
    rsp = call(xr, inputs(cluster("solo", ("gpu", H100, 1), taints=[{"key": "d", "effect": "NoExecute"}])), observed)
    assert desired(rsp) == {}
    assert status(rsp)["removals"][0]["phase"] == "Deleting"


def test_own_terminating_replica_still_holds_its_devices_and_its_name():
    # b-0-solo was dropped on an earlier call but solo still lists it (it terminates):
    # it takes the node, and a new replica neither lands on it nor reuses index 0.
    xr = _five_gpus("b", "2026-01-01T00:00:00Z")
    lingering = cluster("solo", ("gpu", H100, 1), allocations={"gpu": [
        _alloc(f"{NS}/b", f"{NS}/b-0-solo", "2026-01-01T00:00:00Z/ml-team/b/00000", 5)]})
    roomy = cluster("roomy", ("gpu", H100, 1))
    rsp = call(xr, inputs(lingering, roomy), {})
    assert sorted(desired(rsp)) == ["replica-1-roomy"]


# --- the fleet loop: used <= total at every fixed point --------------------------


def _used(c: dict) -> dict[str, int]:
    return {p["name"]: sum(g["count"] * g["devices"].get("gpu", 0) for a in p["allocations"] for g in a["pods"])
            for p in c["status"]["pools"]}


def converge(xrs: list[dict], base: list[dict], rounds: int = 12, start: dict | None = None):
    """Render every deployment per round until nothing changes; returns
    (observed per deployment, clusters as last published, last responses)."""
    observed = {x["metadata"]["name"]: dict((start or {}).get(x["metadata"]["name"], {})) for x in xrs}
    published = [pool_status(c, []) for c in base]
    last = {}
    for _ in range(rounds):
        before = copy.deepcopy(observed)
        # Deployments render concurrently: each sees the same published status.
        for x in xrs:
            name = x["metadata"]["name"]
            last[name] = call(x, inputs(*published), observed[name])
        for x in xrs:
            name = x["metadata"]["name"]
            observed[name] = observe(last[name], url=True, ready=True)
        existing = [o for kids in observed.values() for o in kids.values() if o["kind"] == "ModelReplica"]
        published = [pool_status(c, existing) for c in base]
        if observed == before:
            return observed, published, last
    raise AssertionError("no fixed point")


def _capacity(c: dict) -> dict[str, int]:
    per_node = {"h100-8x-ib": 8, "gke-l4-1x-g2": 1, "gke-a100-80gb-8x": 8}
    return {p["name"]: per_node[p["class"]] * p["nodes"] for p in c["status"]["pools"]}


def test_two_deployments_racing_for_one_node_end_with_one_placed():
    a = _five_gpus("a", "2026-01-01T00:00:00Z")
    b = _five_gpus("b", "2026-01-01T00:01:00Z")
    observed, published, last = converge([a, b], [cluster("solo", ("gpu", H100, 1))])
    [solo] = published
    assert _used(solo) == {"gpu": 5} and _capacity(solo) == {"gpu": 8}
    assert sorted(observed["a"]) == ["endpoint-0-solo", "replica-0-solo"] and observed["b"] == {}
    cond = conditions(last["b"])["Scheduled"]
    assert cond.reason == "Unschedulable" and "solo: pool gpu has room for 3 of 5 pods" in cond.message


def test_three_deployments_for_two_pools_never_overcommit():
    xrs = [_five_gpus(n, f"2026-01-01T00:0{i}:00Z") for i, n in enumerate("abc")]
    observed, published, _ = converge(xrs, [cluster("p", ("gpu", H100, 1)), cluster("q", ("gpu", H100, 1))])
    for c in published:
        assert all(_used(c)[k] <= _capacity(c)[k] for k in _used(c))
    placed = sorted(n for n, kids in observed.items() if kids)
    assert placed == ["a", "b"]


def test_a_noexecute_taint_on_a_full_cluster_moves_what_fits_and_drains_the_rest():
    a = _five_gpus("a", "2026-01-01T00:00:00Z")
    b = _five_gpus("b", "2026-01-01T00:01:00Z")
    start, published, _ = converge([a, b], [cluster("p", ("gpu", H100, 1)), cluster("q", ("gpu", H100, 1))])
    assert sorted(n for n, kids in start.items() if kids) == ["a", "b"]
    tainted = [cluster("p", ("gpu", H100, 1), taints=[{"key": "m", "effect": "NoExecute"}]),
               cluster("q", ("gpu", H100, 1))]
    observed, published, _last = converge([a, b], tainted, start=start)
    for c in published:
        assert all(_used(c)[k] <= _capacity(c)[k] for k in _used(c))
    assert _used(published[0]) == {"gpu": 0}
    assert sum(1 for kids in observed.values() if kids) == 1


def test_a_class_that_shrinks_under_a_running_deployment_evicts_it():
    a = _five_gpus("a", "2026-01-01T00:00:00Z")
    start, _, _ = converge([a], [cluster("p", ("gpu", H100, 1))])
    assert start["a"]
    shrunk = [c for c in CLASSES if c["metadata"]["name"] == H100]
    small = copy.deepcopy(shrunk[0])
    for d in small["spec"]["devices"]:
        if d.get("claim", "DRA") == "DRA":
            d["count"] = 4  # 4 GPUs per node now: 5 pods of 1 GPU do not fit one node
    classes = [c for c in CLASSES if c["metadata"]["name"] != H100] + [small]
    rsp = call(a, {"clusters": [pool_status(cluster("p", ("gpu", H100, 1)), [])], "classes": classes,
                   "services": []}, start["a"])
    removals = status(rsp)["removals"]
    assert [(r["cause"], r["phase"]) for r in removals] == [("Evicted", "Draining")]
