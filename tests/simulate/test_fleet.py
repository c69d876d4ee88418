"""`modelplane simulate examples/fleet`: the whole tree, end to end, through real gRPC functions."""
from __future__ import annotations

import io

import pytest
from modelplane import paths
from modelplane.cli import simulate as simulate_cli
from modelplane.render import FunctionPool
from modelplane.simulate import report
from modelplane.simulate.loop import simulate_dir
from modelplane.validate import Validator
from modelplane.validate.upstream import UpstreamSchemas

FLEET = paths.EXAMPLES / "fleet"


@pytest.fixture(scope="module")
def pool():
    with FunctionPool() as p:
        yield p


@pytest.fixture(scope="module")
def fleet(pool):
    return simulate_dir(FLEET, pool=pool)


def test_fleet_reaches_a_fixed_point(fleet):
    _, outcome = fleet
    assert outcome.converged, outcome.still_changing
    assert outcome.rounds <= 10


def test_every_example_deployment_is_placed_where_it_fits(fleet):
    world, _ = fleet
    rows = {tuple(line.split()[:3]) for line in report.placements(world)[1:]}
    assert rows == {
        ("ml-team/qwen-demo", "0", "gke-us-central"),
        ("ml-team/qwen3-32b-pd", "0", "onprem-west"),
        ("ml-team/qwen3-8b", "0", "gke-us-central"),
        ("ml-team/qwen3-coder", "0", "onprem-west"),
    }
    table = "\n".join(report.placements(world))
    assert "qwen3-coder/Leader=h200, qwen3-coder/Worker=h200" in table  # the gang lands on the H200 pool
    assert "unplaced" not in table


def test_every_xr_is_ready(fleet):
    world, _ = fleet
    not_ready = [line for line in report.conditions(world) if line.endswith("READY=False")]
    assert not_ready == []


def test_services_route_every_selected_endpoint(fleet):
    world, _ = fleet
    lines = report.services(world)
    assert lines[1].split() == ["ml-team/qwen", "http://203.0.113.10/ml-team/qwen", "qwen-demo-0-gke-us-central"]
    assert lines[2].split()[:2] == ["ml-team/search", "http://203.0.113.10/ml-team/search"]
    assert "qwen3-32b-pd-0-onprem-west," in lines[2] and "together-qwen3-coder" in lines[2]


def test_every_composed_resource_is_schema_valid(fleet):
    world, _ = fleet
    upstream = UpstreamSchemas.load()
    ours = Validator.from_paths([paths.APIS])
    problems = []
    checked = 0
    for key, state in world.xrs.items():
        problems += [str(f) for f in ours.validate_document(_without_status(state.obj))]
        for name, obj in state.composed.items():
            spec_only = _without_status(obj)
            if obj.get("apiVersion", "").startswith("modelplane.ai/"):
                problems += [str(f) for f in ours.validate_document(spec_only)]
            else:
                problems += [f"{key} {name}: {e}" for e in upstream.validate(spec_only)]
            checked += 1
    assert problems == []
    assert checked > 100


def test_every_status_simulate_writes_passes_its_schema(fleet):
    """Statuses included: every composed resource, the remote object each Object observed, every XR."""
    world, _ = fleet
    upstream = UpstreamSchemas.load()
    ours = Validator.from_paths([paths.APIS])
    problems: list[str] = []
    checked: set[tuple[str, str]] = set()
    with_status = 0
    for key, state in sorted(world.xrs.items()):
        problems += [str(f) for f in ours.validate_document(state.obj)]
        for name, obj in sorted(state.composed.items()):
            if obj.get("apiVersion", "").startswith("modelplane.ai/"):
                continue  # a composed XR: validated above as the XR it is
            problems += [f"{key} {name}: {e}" for e in upstream.validate(obj)]
            checked.add((obj["apiVersion"], obj["kind"]))
            with_status += "status" in obj
            remote = ((obj.get("status") or {}).get("atProvider") or {}).get("manifest")
            if obj["kind"] == "Object" and remote:
                problems += [f"{key} {name} (remote): {e}" for e in upstream.validate(remote)]
                checked.add((remote["apiVersion"], remote["kind"]))
                with_status += "status" in remote
    assert problems == []
    # Every kind with a status of its own was seen with one: workloads, Gateway API, Envoy, managed resources.
    for kind in [("apps/v1", "Deployment"), ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"), ("batch/v1", "Job"),
                 ("gateway.networking.k8s.io/v1", "Gateway"), ("gateway.networking.k8s.io/v1", "GatewayClass"),
                 ("gateway.networking.k8s.io/v1", "HTTPRoute"), ("gateway.envoyproxy.io/v1alpha1", "Backend"),
                 ("inference.networking.k8s.io/v1", "InferencePool"), ("v1", "PersistentVolumeClaim"),
                 ("helm.m.crossplane.io/v1beta1", "Release"), ("kubernetes.m.crossplane.io/v1alpha1", "Object")]:
        assert kind in checked, kind
    assert with_status > 150


def test_incremental_reconcile_reaches_the_same_world_as_rendering_everything_every_round(fleet, pool):
    """Re-rendering only dirty XRs (watched selectors, observed changes) loses nothing: same XRs,
    statuses, composed objects and placements as the reference that renders every XR every round."""
    world, outcome = fleet
    full, full_outcome = simulate_dir(FLEET, pool=pool, incremental=False)
    assert full_outcome.converged
    assert world.snapshot() == full.snapshot()
    assert report.placements(world) == report.placements(full)
    assert outcome.renders < full_outcome.renders


def test_an_unready_cache_job_keeps_the_gang_unplaced_and_says_why(pool):
    world, outcome = simulate_dir(FLEET, pool=pool, unready={"modelcache-qwen3-coder-onprem-west-job-9d34f82f"})
    assert outcome.converged
    coder = world.xrs[("ModelDeployment", "ml-team", "qwen3-coder")].obj
    scheduled = next(c for c in coder["status"]["conditions"] if c["type"] == "Scheduled")
    assert scheduled["status"] == "False"
    assert scheduled["message"].startswith("0/1 replicas placed; replica 0: 0/6 clusters fit: ")
    assert "onprem-west: cache qwen3-coder not Ready" in scheduled["message"]
    assert "gke-us-central: cache qwen3-coder not on this cluster" in scheduled["message"]


def test_cli_prints_the_table_and_conditions():
    out, err = io.StringIO(), io.StringIO()
    assert simulate_cli.run([str(FLEET), "--show", "conditions"], stdout=out, stderr=err) == 0
    text = out.getvalue()
    assert text.startswith("# ")
    assert "ModelDeployment/ml-team/qwen3-coder  READY=True" in text
    assert "Scheduled=True Scheduled: 1/1 replicas placed" in text


def _without_status(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if k != "status"}


def test_status_blind_readers_render_the_same_whatever_the_status_of_what_they_read(fleet, pool):
    """simulate does not wake the readers in STATUS_BLIND when only the status of what they read
    changes; that is sound only while their output does not depend on it. Render each such reader
    of the fixed-point fleet, then again with every object it reads given another status."""
    from modelplane.render import render
    from modelplane.simulate.loop import Simulator
    from modelplane.simulate.tracking import STATUS_BLIND

    world, _ = fleet
    sim = Simulator(world, pool)
    try:
        checked = 0
        for read_kind, reader_kinds in sorted(STATUS_BLIND.items()):
            readers = sorted(k for k in world.xrs if k[0] in reader_kinds)
            assert readers, reader_kinds
            before = {k: render(sim.inputs(k)[0], pool) for k in readers}
            read = [k for k in world.xrs if k[0] == read_kind]
            assert read, read_kind
            for k in read:
                sim.changes.store.put(k, {**world.xrs[k].obj, "status": {"conditions": [
                    {"type": "Ready", "status": "False", "reason": "Changed", "message": "another status",
                     "lastTransitionTime": "2030-01-01T00:00:00Z"}], "ready": False}})
            for k in readers:
                after = render(sim.inputs(k)[0], pool)
                assert (after.xr, after.composed) == (before[k].xr, before[k].composed), k
                checked += 1
        assert checked
    finally:
        world.listeners.remove(sim._on_change)
        sim.close()


def test_no_render_depends_on_its_own_xrs_status(fleet, pool):
    """simulate does not wake an XR for the status its own render wrote; that is sound only while
    no function's answer depends on its XR's status. Render every XR of the fixed-point fleet,
    then again with another status, and with none."""
    from modelplane.render import render
    from modelplane.simulate.loop import Simulator

    world, _ = fleet
    sim = Simulator(world, pool)
    other = {"conditions": [{"type": "Ready", "status": "False", "reason": "Changed", "message": "another status",
                             "lastTransitionTime": "2030-01-01T00:00:00Z"}], "ready": False, "pools": []}
    try:
        keys = sorted(world.xrs)
        assert {k[0] for k in keys} >= {"InferenceCluster", "ModelDeployment", "ModelReplica", "ModelEndpoint",
                                        "ModelService", "InferenceGateway", "InferenceClass", "ModelCache"}
        for key in keys:
            state = world.xrs[key]
            before = render(sim.inputs(key)[0], pool)
            live = state.obj
            for status in (other, None):
                state.obj = {**_without_status(live), **({"status": status} if status else {})}
                try:
                    after = render(sim.inputs(key)[0], pool)
                finally:
                    state.obj = live
                assert after.composed == before.composed, key
                assert after.xr.get("status") == before.xr.get("status"), key
    finally:
        world.listeners.remove(sim._on_change)
        sim.close()


def _assert_renders_alike(sim, pool, md, before, key, changed: dict) -> None:
    """``md`` renders as ``before`` with the object at ``key`` read as ``changed`` (then put back)."""
    from modelplane.render import render

    kept = sim.changes.store.get(key)
    sim.changes.store.put(key, changed)
    try:
        after = render(sim.inputs(md)[0], pool)
    finally:
        sim.changes.store.put(key, kept)
    assert (after.xr, after.composed) == (before.xr, before.composed), (md, key)


def test_a_placed_deployment_renders_the_same_whatever_the_clusters_it_is_not_on_report(fleet, pool):
    """simulate does not wake a fully placed ModelDeployment for status changes of clusters that
    hold none of its replicas (tracking._concerns). Render each such deployment of the fixed-point
    fleet, then again with each of those clusters down, full, or emptied."""
    from modelplane.render import render
    from modelplane.simulate.loop import Simulator
    from modelplane.simulate.tracking import _allocated, _concerns

    world, _ = fleet
    sim = Simulator(world, pool)

    def variants(obj: dict) -> list[dict]:
        status = obj.get("status") or {}
        down = {**status, "conditions": [{"type": "Ready", "status": "False", "reason": "Unavailable",
                                          "lastTransitionTime": "2030-01-01T00:00:00Z"}]}
        full = {**status, "pools": [{**p, "allocations": [*p.get("allocations", []), {
            "replica": "other/filler", "deployment": "other/filler", "order": "2020-01-01T00:00:00Z/other/filler",
            "pods": [{"count": 64, "devices": {"gpu": 8}, "gang": False}]}]} for p in status.get("pools") or []]}
        empty = {**status, "pools": [{**p, "allocations": []} for p in status.get("pools") or []]}
        return [{**obj, "status": s} for s in (down, full, empty)]

    try:
        checked = 0
        clusters = sorted(k for k in world.xrs if k[0] == "InferenceCluster")
        for md in sorted(k for k in world.xrs if k[0] == "ModelDeployment"):
            obj = world.xrs[md].obj
            before = render(sim.inputs(md)[0], pool)
            for ck in clusters:
                cluster = world.xrs[ck].obj
                if _concerns(obj, ck[2], _allocated(cluster)):
                    continue
                for changed in variants(cluster):
                    assert not _concerns(obj, ck[2], _allocated(cluster, changed))
                    _assert_renders_alike(sim, pool, md, before, ck, changed)
                    checked += 1
        assert checked >= 6
    finally:
        world.listeners.remove(sim._on_change)
        sim.close()


def test_a_deployment_with_nothing_leaving_renders_the_same_whatever_the_routes(fleet, pool):
    """simulate does not wake a ModelDeployment with no removals for status changes of the
    ModelServices it reads (tracking._drains). Render each such deployment of the fixed-point
    fleet, then again with every ModelService routing nothing, something else, or more."""
    from modelplane.render import render
    from modelplane.simulate.loop import Simulator
    from modelplane.simulate.tracking import _drains

    world, _ = fleet
    sim = Simulator(world, pool)
    services = sorted(k for k in world.xrs if k[0] == "ModelService")

    def variants(obj: dict) -> list[dict]:
        status = obj.get("status") or {}
        routed = list(status.get("routedBackends") or [])
        return [{**obj, "status": {**status, "routedBackends": r}}
                for r in ([], ["elsewhere-backend"], [*routed, "elsewhere-backend"])]

    try:
        checked = 0
        for md in sorted(k for k in world.xrs if k[0] == "ModelDeployment"):
            if _drains(world.xrs[md]):
                continue
            before = render(sim.inputs(md)[0], pool)
            for sk in services:
                for changed in variants(world.xrs[sk].obj):
                    _assert_renders_alike(sim, pool, md, before, sk, changed)
                    checked += 1
        assert checked >= 6
    finally:
        world.listeners.remove(sim._on_change)
        sim.close()


def test_a_deployment_draining_a_replica_is_woken_by_the_routes():
    from modelplane.simulate.tracking import _drains
    from modelplane.simulate.world import XRState

    md = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment", "metadata": {"name": "d"}}
    assert _drains(XRState(obj=md))                                             # not answered yet
    assert not _drains(XRState(obj={**md, "status": {"removals": []}}))
    assert _drains(XRState(obj={**md, "status": {"removals": [{"index": 0, "phase": "Draining"}]}}))
    assert _drains(XRState(obj={**md, "status": {"removals": []}}, fatal="spec: bad"))
