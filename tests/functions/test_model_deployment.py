"""compose-model-deployment, in-process through the real runtime.

Fleets are written with tiny builders (``cluster``, ``alloc``, deployments.py);
classes are the platform examples (L4 24Gi, A100 80Gi, H100 80Gi + IB NIC, H200
141Gi); deployments are the ml-team seed manifests. Observed children are
produced by running the function once and feeding its output back, as
Crossplane would, with whatever status a test needs.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import functions, paths
from modelplane.cel import guards
from modelplane.pipeline.composition import NOW_CONTEXT_KEY
from modelplane.validate import Validator

from tests.functions.deployments import (
    A100,
    CLASSES,
    CODER,
    FN,
    H100,
    H200,
    L4,
    NS,
    PD,
    QWEN3_8B,
    QWEN_DEMO,
    alloc,
    call,
    cluster,
    deployment,
    inputs,
    model_cache,
    observe,
    pools_of,
    replicas,
)
from tests.support import conditions, desired, fatal, request, run, status


@pytest.fixture(scope="module")
def validator():
    return Validator.from_paths([paths.APIS])


# --- seeds place as expected --------------------------------------------------


@dataclass
class Placed:
    name: str
    xr: dict
    required: dict
    want_cluster: str
    want_pools: dict[str, str]
    want_cache: str | None = None


FLEET = [
    cluster("edge-l4", ("l4", L4, 2)),
    cluster("core-a100", ("a100", A100, 2)),
    cluster("hpc", ("h100", H100, 2), labels={"tier": "frontier"}),
    cluster("frontier", ("h200", H200, 2), labels={"tier": "frontier"}),
]

SEEDS = [
    Placed("qwen-demo takes the tightest pool: a 1-GPU L4 node", deployment(QWEN_DEMO), inputs(*FLEET),
           "edge-l4", {"qwen/Standalone": "l4"}),
    Placed("qwen3-8b (20Gi) also lands on the L4 cluster", deployment(QWEN3_8B), inputs(*FLEET),
           "edge-l4", {"qwen3-8b/Standalone": "l4"}),
    Placed("qwen3-coder gang needs 120Gi GPUs on two nodes and its Ready cache: H200",
           deployment(CODER), inputs(*FLEET, cache=model_cache(frontier="Ready", hpc="Ready")),
           "frontier", {"qwen3-coder/Leader": "h200", "qwen3-coder/Worker": "h200"}, want_cache="modelcache-qwen3-coder"),
    Placed("prefill/decode stays on one cluster: Hopper prefill, 80Gi decode",
           deployment(PD), inputs(FLEET[0], FLEET[2]),
           "hpc", {"prefill/Standalone": "h100", "decode/Standalone": "h100"}),
]


@pytest.mark.parametrize("case", SEEDS, ids=lambda c: c.name)
def test_seed_manifests_place_as_expected(case: Placed, validator):
    rsp = call(case.xr, case.required)
    assert fatal(rsp) is None
    [(name, replica)] = replicas(rsp).items()
    assert replica["spec"]["cluster"]["name"] == case.want_cluster
    assert name == f"replica-0-{case.want_cluster}"
    assert replica["metadata"]["name"] == f"{case.xr['metadata']['name']}-0-{case.want_cluster}"
    assert pools_of(replica) == case.want_pools
    assert (replica["spec"].get("modelCache") or {}).get("pvcName") == case.want_cache
    assert validator.validate_document(replica) == []


def test_prefill_decode_replica_carries_phases_copies_and_placement():
    [replica] = replicas(call(deployment(PD), inputs(FLEET[2]))).values()
    engines = {e["name"]: e for e in replica["spec"]["engines"]}
    assert replica["spec"]["servingMode"] == "PrefillDecode"
    assert (engines["prefill"]["phase"], engines["decode"]["phase"]) == ("Prefill", "Decode")
    assert engines["decode"]["copies"] == 2
    # 1 prefill pod + 2 decode copies, 2 GPUs each, all in the h100 pool.
    pods = [g for p in replica["spec"]["placement"] for g in p["pods"]]
    assert {p["pool"] for p in replica["spec"]["placement"]} == {"h100"}
    assert sum(g["count"] for g in pods) == 3 and {g["devices"]["gpu"] for g in pods} == {2}


def test_member_devices_resolve_claim_and_device_class_from_the_class():
    [replica] = replicas(call(deployment(QWEN_DEMO), inputs(FLEET[0]))).values()
    member = replica["spec"]["engines"][0]["members"][0]
    assert member["devices"][0]["claim"] == "DRA"
    assert member["devices"][0]["deviceClassName"] == "gpu.nvidia.com"
    assert member["nodes"] == 1
    assert member["template"] == QWEN_DEMO["spec"]["engines"][0]["members"][0]["template"]


def test_gang_worker_member_has_worker_nodes():
    xr = deployment(CODER)
    [replica] = replicas(call(xr, inputs(FLEET[3], cache=model_cache(frontier="Ready")))).values()
    roles = {m["role"]: m for m in replica["spec"]["engines"][0]["members"]}
    assert roles["Worker"]["nodes"] == 1 and roles["Leader"]["nodes"] == 1
    assert replica["spec"]["placement"][0]["pods"][0]["gang"] is True


# --- requirements and tenancy -------------------------------------------------


def test_requirements_carry_selector_and_cache_namespace():
    xr = deployment(CODER, clusterSelector={"matchLabels": {"tier": "frontier"}})
    rsp = call(xr, None)
    req = rsp.requirements.resources
    assert dict(req["clusters"].match_labels.labels) == {"tier": "frontier"}
    assert req["classes"].kind == "InferenceClass"
    assert (req["cache"].match_name, req["cache"].namespace) == ("qwen3-coder", NS)


def test_no_cache_requirement_without_model_cache_ref():
    assert "cache" not in call(deployment(QWEN_DEMO), None).requirements.resources


# --- nothing lost while inputs are missing --------------------------------------


@dataclass
class Waiting:
    name: str
    xr: dict
    required: dict
    names: str


def _placed_coder():
    xr = deployment(CODER)
    required = inputs(FLEET[3], cache=model_cache(frontier="Ready"))
    first = observe(call(xr, required), url=True, ready=True)
    return xr, observe(call(xr, required, first), url=True, ready=True)


WAITING = [
    Waiting("clusters not fetched", deployment(CODER), {"classes": CLASSES, "cache": [model_cache()]},
            "InferenceClusters"),
    Waiting("classes not fetched", deployment(CODER), {"clusters": FLEET, "cache": [model_cache()]},
            "InferenceClasses"),
    Waiting("cache not fetched", deployment(CODER), {"clusters": FLEET, "classes": CLASSES}, "ModelCache qwen3-coder"),
]


@pytest.mark.parametrize("case", WAITING, ids=lambda c: c.name)
def test_waiting_for_inputs_keeps_every_child(case: Waiting):
    xr, observed = _placed_coder()
    assert {o["kind"] for o in observed.values()} == {"ModelReplica", "ModelEndpoint"}
    xr["status"] = {"replicas": {"desired": 1, "scheduled": 1, "ready": 1}}
    rsp = call(xr, case.required, observed)
    assert fatal(rsp) is None
    assert sorted(desired(rsp)) == sorted(observed)
    cond = conditions(rsp)["Scheduled"]
    assert cond.reason == "WaitingForInputs" and case.names in cond.message
    assert status(rsp)["replicas"] == {"desired": 1, "scheduled": 1, "ready": 1}


def test_a_deleted_cluster_evicts_its_replica_out_of_routing_first_then_deletes_it():
    xr, observed = _placed_coder()
    assert "endpoint-0-frontier" in observed
    required = inputs(FLEET[0], cache=model_cache(frontier="Ready"))
    rsp = call(xr, required, observed)
    # Step 1: both stay: the endpoint out of routing (a route may still name its Service), the
    # replica (its pods still hold devices and finish what they serve), annotated.
    assert sorted(desired(rsp)) == ["endpoint-0-frontier", "replica-0-frontier"]
    assert desired(rsp)["endpoint-0-frontier"]["metadata"]["annotations"] == {
        "modelplane.ai/out-of-routing": "draining: Evicted: cluster frontier no longer exists"}
    replica = desired(rsp)["replica-0-frontier"]
    assert replica["metadata"]["annotations"] == {
        "modelplane.ai/draining": "Evicted: cluster frontier no longer exists"}
    assert replica["spec"] == observed["replica-0-frontier"]["spec"]
    assert status(rsp)["removals"] == [{"index": 0, "name": "qwen3-coder-0-frontier", "cluster": "frontier",
                                        "cause": "Evicted", "reason": "cluster frontier no longer exists",
                                        "phase": "Draining"}]
    assert conditions(rsp)["Scheduled"].reason == "Unschedulable"
    # Step 2: no ModelService route carries it and the drain period (0 here) is over: both go.
    rsp = call(xr, required, observe(rsp, url=True, ready=True))
    assert desired(rsp) == {}
    assert status(rsp)["removals"][0]["phase"] == "Deleting"
    # Step 3: nothing of it is observed any more.
    rsp = call(xr, required, {})
    assert desired(rsp) == {} and status(rsp)["removals"] == []


def test_a_draining_replica_is_deleted_even_if_its_place_comes_back():
    xr, observed = _placed_coder()
    required = inputs(FLEET[3], cache=model_cache(frontier="Ready"))
    drained = observe(call(xr, inputs(FLEET[0], cache=model_cache(frontier="Ready")), observed), url=True,
                      ready=True)
    # The cluster is listed again, the replica would fit: the decision sticks.
    rsp = call(xr, required, drained)
    assert "replica-0-frontier" not in desired(rsp)
    assert status(rsp)["removals"][0]["cause"] == "Evicted"


def test_cluster_gone_moves_the_replica_when_another_fits():
    xr = deployment(QWEN_DEMO)
    observed = observe(call(xr, inputs(FLEET[0])), url=True)
    rsp = call(xr, inputs(FLEET[1]), observed)
    # Never routed (not Ready, no endpoint): deleted at once.
    assert sorted(replicas(rsp)) == ["replica-0-core-a100"]
    assert "replica-0-edge-l4" not in desired(rsp) and "endpoint-0-edge-l4" not in desired(rsp)


def test_a_routed_replica_that_moves_is_drained_while_its_replacement_starts():
    xr = deployment(QWEN_DEMO)
    first = observe(call(xr, inputs(FLEET[0])), url=True, ready=True)
    routed = observe(call(xr, inputs(FLEET[0]), first), url=True, ready=True)
    tainted = cluster("edge-l4", ("l4", L4, 2), taints=[{"key": "maintenance", "effect": "NoExecute"}])
    rsp = call(xr, inputs(tainted, FLEET[1]), routed)
    assert sorted(desired(rsp)) == ["endpoint-0-edge-l4", "replica-0-core-a100", "replica-0-edge-l4"]
    assert desired(rsp)["replica-0-edge-l4"]["metadata"]["annotations"]["modelplane.ai/draining"] == (
        "Evicted: NoExecute taint maintenance")
    assert "replica 0 moved from edge-l4 to core-a100: NoExecute taint maintenance" in (
        conditions(rsp)["Scheduled"].message)
    rsp = call(xr, inputs(tainted, FLEET[1]), observe(rsp, url=True))
    assert sorted(desired(rsp)) == ["replica-0-core-a100"]


def test_unready_cluster_holds_nothing_back_from_a_placed_replica():
    xr = deployment(QWEN_DEMO)
    observed = observe(call(xr, inputs(FLEET[0])))
    not_ready = cluster("edge-l4", ("l4", L4, 2), ready=False)
    assert sorted(replicas(call(xr, inputs(not_ready), observed))) == ["replica-0-edge-l4"]


# --- capacity, scale ----------------------------------------------------------


def test_other_deployments_allocations_take_capacity():
    full = cluster("edge-l4", ("l4", L4, 1), allocations={"l4": [alloc("other/x", "other/x-0-edge-l4")]})
    rsp = call(deployment(QWEN_DEMO), inputs(full))
    assert replicas(rsp) == {}
    cond = conditions(rsp)["Scheduled"]
    assert cond.reason == "Unschedulable" and "0/1 clusters fit" in cond.message
    assert status(rsp)["replicas"]["scheduled"] == 0


def test_own_allocations_are_not_counted_twice():
    xr = deployment(QWEN_DEMO)
    observed = observe(call(xr, inputs(FLEET[0])))
    own = cluster("edge-l4", ("l4", L4, 2), allocations={"l4": [
        alloc(f"{NS}/qwen-demo", f"{NS}/qwen-demo-0-edge-l4", order="2026-01-01T00:00:00Z"),
        alloc("other/x", "other/x-0-edge-l4")]})
    rsp = call(xr, inputs(own), observed)
    assert sorted(replicas(rsp)) == ["replica-0-edge-l4"]
    assert conditions(rsp)["Scheduled"].reason == "Scheduled"


def test_partially_scheduled_when_capacity_runs_out():
    rsp = call(deployment(QWEN_DEMO, replicas=3), inputs(cluster("edge-l4", ("l4", L4, 2))))
    assert len(replicas(rsp)) == 2
    cond = conditions(rsp)["Scheduled"]
    assert cond.status == fnv1.STATUS_CONDITION_FALSE and cond.reason == "PartiallyScheduled" and "2/3 replicas placed" in cond.message


def test_scale_up_keeps_replica_zero_and_spreads_the_new_one():
    xr = deployment(QWEN_DEMO)
    observed = observe(call(xr, inputs(FLEET[0])))
    rsp = call(deployment(QWEN_DEMO, replicas=2), inputs(FLEET[0], FLEET[1]), observed)
    assert sorted(replicas(rsp)) == ["replica-0-edge-l4", "replica-1-core-a100"]


def test_scale_down_drains_the_highest_index_then_deletes_it():
    xr = deployment(QWEN_DEMO, replicas=2)
    observed = observe(call(xr, inputs(FLEET[0], FLEET[1])), url=True, ready=True)
    observed = observe(call(xr, inputs(FLEET[0], FLEET[1]), observed), url=True, ready=True)
    assert len([n for n in observed if n.startswith("endpoint-")]) == 2
    smaller = deployment(QWEN_DEMO, replicas=1)
    rsp = call(smaller, inputs(FLEET[0], FLEET[1]), observed)
    assert sorted(desired(rsp)) == ["endpoint-0-edge-l4", "endpoint-1-core-a100", "replica-0-edge-l4",
                                    "replica-1-core-a100"]
    assert status(rsp)["removals"] == [{"index": 1, "name": "qwen-demo-1-core-a100", "cluster": "core-a100",
                                        "cause": "Removed", "reason": "scaled down to 1", "phase": "Draining"}]
    rsp = call(smaller, inputs(FLEET[0], FLEET[1]), observe(rsp, url=True, ready=True))
    assert sorted(desired(rsp)) == ["endpoint-0-edge-l4", "replica-0-edge-l4"]


# --- cache ---------------------------------------------------------------------


@pytest.mark.parametrize("phase,placed", [("Ready", True), ("Hydrating", False), ("Failed", False)])
def test_cache_must_be_ready_on_the_cluster(phase, placed):
    rsp = call(deployment(CODER), inputs(FLEET[3], cache=model_cache(frontier=phase)))
    assert bool(replicas(rsp)) is placed
    if not placed:
        assert "cache qwen3-coder not Ready" in conditions(rsp)["Scheduled"].message


def test_cache_in_another_namespace_is_never_used():
    # Crossplane answers the namespaced requirement with nothing: the other team's cache is invisible.
    rsp = call(deployment(CODER), {"clusters": [FLEET[3]], "classes": CLASSES, "cache": [], "services": []})
    assert replicas(rsp) == {}
    assert f"ModelCache qwen3-coder not found in namespace {NS}" in conditions(rsp)["Scheduled"].message


# --- endpoints, labels, readiness ------------------------------------------------


def test_endpoint_is_withheld_until_the_replica_is_ready_with_its_url():
    xr = deployment(QWEN_DEMO)
    first = call(xr, inputs(FLEET[0]))
    assert [n for n in desired(first) if n.startswith("endpoint-")] == []
    # A URL alone is not enough: the replica joins routing once it can serve.
    assert "endpoint-0-edge-l4" not in desired(call(xr, inputs(FLEET[0]), observe(first, url=True)))
    rsp = call(xr, inputs(FLEET[0]), observe(first, url=True, ready=True))
    endpoint = desired(rsp)["endpoint-0-edge-l4"]
    # Two hops: the control plane sends "/" to the cluster gateway; the ModelService's route
    # there finds the replica's backends, which the endpoint carries.
    assert endpoint["spec"] == {"url": "http://203.0.113.10", "rewritePath": "/", "api": "OpenAI", "replica": {
        "name": "qwen-demo-0-edge-l4", "cluster": "edge-l4", "providerConfigName": "edge-l4",
        "gateway": {"name": "modelplane", "namespace": "modelplane-system"},
        "backendRefs": [{"group": "", "kind": "Service", "name": "qwen-demo-0-edge-l4-engine", "port": 8000}]}}
    assert endpoint["metadata"]["name"] == "qwen-demo-0-edge-l4"


def test_existing_endpoint_is_kept_while_the_url_is_unpublished():
    xr = deployment(QWEN_DEMO)
    observed = observe(call(xr, inputs(FLEET[0]), observe(call(xr, inputs(FLEET[0])), url=True, ready=True)))
    observed["replica-0-edge-l4"]["status"] = {"ready": False}
    rsp = call(xr, inputs(FLEET[0]), observed)
    assert desired(rsp)["endpoint-0-edge-l4"]["spec"]["url"] == "http://203.0.113.10"


def test_labels_propagate_and_reserved_keys_win(validator):
    xr = deployment(QWEN_DEMO)
    xr["metadata"]["labels"] = {"team": "search", "modelplane.ai/cluster": "spoofed"}
    first = call(xr, inputs(FLEET[0]))
    rsp = call(xr, inputs(FLEET[0]), observe(first, url=True, ready=True))
    want = {"team": "search", "modelplane.ai/deployment": "qwen-demo", "modelplane.ai/cluster": "edge-l4",
            "modelplane.ai/replica": "0", "modelplane.ai/revision": status(rsp)["revision"]}
    for name in ("replica-0-edge-l4", "endpoint-0-edge-l4"):
        obj = desired(rsp)[name]
        assert obj["metadata"]["labels"] == want
        assert validator.validate_document(obj) == []


def test_ready_replicas_make_the_deployment_ready():
    xr = deployment(QWEN_DEMO)
    rsp = call(xr, inputs(FLEET[0]), observe(call(xr, inputs(FLEET[0])), url=True, ready=True))
    st = status(rsp)
    assert st["replicas"] == {"desired": 1, "scheduled": 1, "ready": 1, "updated": 1}
    assert st["selector"] == "modelplane.ai/deployment=qwen-demo"
    assert st["placements"] == [{"index": 0, "name": "qwen-demo-0-edge-l4", "cluster": "edge-l4", "ready": True,
                                 "members": [{"engine": "qwen", "role": "Standalone", "pool": "l4"}],
                                 "revision": st["revision"]}]
    assert rsp.desired.composite.ready == fnv1.READY_TRUE


def test_unready_replica_keeps_the_deployment_unready():
    xr = deployment(QWEN_DEMO)
    rsp = call(xr, inputs(FLEET[0]), observe(call(xr, inputs(FLEET[0]))))
    assert status(rsp)["replicas"]["ready"] == 0
    assert rsp.desired.composite.ready == fnv1.READY_FALSE


# --- input errors ---------------------------------------------------------------


@pytest.mark.parametrize("cel,why", [("device.attributes[", "syntax"), ("x" * 11000, "too long")])
def test_bad_cel_selector_is_fatal_with_its_path(cel, why):
    xr = deployment(QWEN_DEMO)
    xr["spec"]["engines"][0]["members"][0]["nodeSelector"]["devices"][0]["selectors"] = [
        {"cel": "true"}, {"cel": cel}]
    msg = fatal(call(xr, inputs(FLEET[0])))
    assert msg is not None and "spec.engines[0].members[0].nodeSelector.devices[0].selectors[1].cel" in msg, why


def test_output_is_deterministic(monkeypatch):
    # The same input in another order gives the same bytes. Two things outside the input could
    # make the two calls differ, and neither is under test here: the time (each call is given the
    # same one, so a TTL or a drain note cannot straddle a second) and CEL's CPU deadline, which
    # a busy or descheduled machine can hit on the first call only (its "transient" rejection is
    # not remembered, the second call's match is): it gets a budget no evaluation reaches.
    monkeypatch.setitem(guards.LIMITS, "dra", dataclasses.replace(guards.LIMITS["dra"], cpu_ms=60_000.0))
    xr = deployment(PD, replicas=2)
    a = run(FN, at_noon(request(xr, required=inputs(*FLEET)))).SerializeToString(deterministic=True)
    b = run(FN, at_noon(request(xr, required=inputs(*reversed(FLEET))))).SerializeToString(deterministic=True)
    assert a == b


def test_an_answer_that_met_the_cel_cpu_deadline_is_never_kept(monkeypatch):
    """A selector rejected for the moment (CPU deadline) leaves the replica unplaced this call only:
    such an answer must not be given again for the same request, or a busy second would stick."""
    from modelplane.pipeline.server import compose_call

    xr = deployment(QWEN_DEMO)
    # First a budget no evaluation reaches (a busy machine must not make this call transient too).
    monkeypatch.setitem(guards.LIMITS, "dra", dataclasses.replace(guards.LIMITS["dra"], cpu_ms=60_000.0))
    _, timeless = compose_call(FN, functions.load(FN), at_noon(request(xr, required=inputs(*FLEET))))
    assert timeless  # the same request at rest: the answer holds whatever the time
    monkeypatch.setitem(guards.LIMITS, "dra", dataclasses.replace(guards.LIMITS["dra"], cpu_ms=0.0))
    # A selector no earlier call evaluated (the process-wide memo answers known ones without CEL).
    for d in xr["spec"]["engines"][0]["members"][0]["nodeSelector"]["devices"]:
        d["selectors"] = [*d.get("selectors", []), {"cel": 'device.driver != "transient.test.invalid"'}]
    rsp, timeless = compose_call(FN, functions.load(FN), at_noon(request(xr, required=inputs(*FLEET))))
    assert "CPU" in conditions(rsp)["Scheduled"].message
    assert not timeless


def at_noon(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionRequest:
    req.context.update({NOW_CONTEXT_KEY: "2026-01-01T12:00:00Z"})
    return req


# --- over real gRPC ------------------------------------------------------------------


def test_serves_over_grpc():
    from tests.support import call as grpc_call
    from tests.support import serve_process

    req = request(deployment(QWEN_DEMO), required=inputs(*FLEET))
    with serve_process(FN, "--insecure") as address:
        rsp = grpc_call(address, req)
    assert fatal(rsp) is None
    assert sorted(replicas(rsp)) == ["replica-0-edge-l4"]
    assert conditions(rsp)["Scheduled"].reason == "Scheduled"
