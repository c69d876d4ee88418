"""Issue 11 "Done when": no overcommit survives a fixed point, checked on the physical clusters.

Each case runs the real functions over gRPC, then checks both views of
capacity: what the InferenceClusters publish (``status.pools`` allocations
against the pool's devices) and what really runs (devices bound by pods,
and no pod left Pending).
"""
from __future__ import annotations

import copy

import pytest
from modelplane.render import FunctionPool
from modelplane.simulate import report
from modelplane.simulate.loop import Simulator
from modelplane.simulate.world import World
from modelplane.validate.admission import load_dir

from tests.simulate import fleets


@pytest.fixture(scope="module")
def pool():
    with FunctionPool() as p:
        yield p


@pytest.fixture
def start(pool, tmp_path):
    sims: list[Simulator] = []

    def make(*docs) -> Simulator:
        xrs, others = load_dir(fleets.write(tmp_path / "fleet", *docs))
        world = World(others=others)
        for obj in xrs:
            world.apply(obj)
        sims.append(Simulator(world, pool))
        return sims[-1]

    yield make
    for sim in sims:
        sim.close()


def settle(sim: Simulator) -> None:
    outcome = sim.run(max_rounds=60)
    assert outcome.converged, outcome.still_changing


def published_overcommit(sim: Simulator) -> list[str]:
    """Pools whose status.pools allocations hold more devices than the pool has."""
    classes = {k[2]: s.obj["spec"] for k, s in sim.world.xrs.items() if k[0] == "InferenceClass"}
    out = []
    for key, state in sim.world.xrs.items():
        if key[0] != "InferenceCluster":
            continue
        for pool in (state.obj.get("status") or {}).get("pools") or []:
            per_node = {d["name"]: d.get("count", 1) for d in classes[pool["class"]]["devices"]}
            total = {name: n * pool["nodes"] for name, n in per_node.items()}
            used: dict[str, int] = {}
            for alloc in pool.get("allocations") or []:
                for group in alloc["pods"]:
                    for name, n in group["devices"].items():
                        used[name] = used.get(name, 0) + n * group["count"]
            out += [f"{key[2]}/{pool['name']}: {name} {n}/{total.get(name, 0)}" for name, n in used.items()
                    if n > total.get(name, 0)]
    return out


def assert_truthful(sim: Simulator) -> None:
    assert published_overcommit(sim) == []
    for name, cluster in sim.physical.clusters.items():
        assert all(u.used <= u.total for u in cluster.capacity()), (name, cluster.capacity())
        assert cluster.pending() == [], (name, cluster.pending())


def ready(sim: Simulator, name: str) -> bool:
    status = sim.world.xrs[("ModelDeployment", "ml-team", name)].obj.get("status") or {}
    return any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])


def condition(sim: Simulator, name: str, typ: str) -> dict:
    status = sim.world.xrs[("ModelDeployment", "ml-team", name)].obj.get("status") or {}
    return next(c for c in status.get("conditions") or [] if c["type"] == typ)


def used(sim: Simulator, cluster: str) -> dict[str, str]:
    return {u.pool: f"{u.used}/{u.total}" for u in sim.physical.clusters[cluster].capacity()}


def test_two_deployments_for_one_8_gpu_pool_place_one_and_name_the_cluster_for_the_other(start):
    sim = start(fleets.gpu_class("h100-8x"), fleets.existing_cluster("solo", [("gpu", "h100-8x", 1)]),
                fleets.gateway(), fleets.deployment("first", copies=5), fleets.deployment("second", copies=5))
    settle(sim)
    assert_truthful(sim)
    assert ready(sim, "first") and not ready(sim, "second")
    scheduled = condition(sim, "second", "Scheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
    assert "solo: " in scheduled["message"]
    assert used(sim, "solo") == {"gpu": "5/8"}
    assert [k[2] for k in sim.world.xrs if k[0] == "ModelReplica"] == ["first-0-solo"]
    assert report.capacity(sim.physical)[-1] == "No Pending pods."


def test_three_deployments_competing_for_two_pools(start):
    sim = start(fleets.gpu_class("h100-8x"),
                fleets.existing_cluster("east", [("gpu", "h100-8x", 1)]),
                fleets.existing_cluster("west", [("gpu", "h100-8x", 1)]), fleets.gateway(),
                *(fleets.deployment(n, copies=6) for n in ("one", "two", "three")))
    settle(sim)
    assert_truthful(sim)
    placed = sorted(k[2] for k in sim.world.xrs if k[0] == "ModelReplica")
    assert len(placed) == 2 and {p.rsplit("-", 1)[1] for p in placed} == {"east", "west"}
    assert [ready(sim, n) for n in ("one", "two", "three")].count(True) == 2
    assert used(sim, "east") == {"gpu": "6/8"} and used(sim, "west") == {"gpu": "6/8"}


def test_a_no_execute_taint_moves_the_replicas_off_and_nothing_is_left_pending(start):
    east = fleets.existing_cluster("east", [("gpu", "h100-8x", 1)])
    sim = start(fleets.gpu_class("h100-8x"), east,
                fleets.existing_cluster("west", [("gpu", "h100-8x", 1)]), fleets.gateway(),
                fleets.deployment("model", replicas=1, copies=4))
    settle(sim)
    before = [k[2] for k in sim.world.xrs if k[0] == "ModelReplica"]
    assert len(before) == 1
    held = before[0].rsplit("-", 1)[1]
    tainted = copy.deepcopy(east if held == "east" else fleets.existing_cluster("west", [("gpu", "h100-8x", 1)]))
    tainted["spec"]["taints"] = [{"key": "maintenance", "value": "now", "effect": "NoExecute"}]
    sim.world.apply(tainted)
    settle(sim)
    assert_truthful(sim)
    after = [k[2] for k in sim.world.xrs if k[0] == "ModelReplica"]
    other = "west" if held == "east" else "east"
    assert after == [f"model-0-{other}"] and ready(sim, "model")
    assert used(sim, held) == {"gpu": "0/8"} and used(sim, other) == {"gpu": "4/8"}


def test_a_class_whose_devices_shrink_under_a_running_deployment(start):
    sim = start(fleets.gpu_class("h100-8x"), fleets.existing_cluster("solo", [("gpu", "h100-8x", 1)]),
                fleets.gateway(), fleets.deployment("model", copies=6))
    settle(sim)
    assert ready(sim, "model") and used(sim, "solo") == {"gpu": "6/8"}
    sim.world.apply(fleets.gpu_class("h100-8x", count=4))
    settle(sim)
    assert_truthful(sim)
    assert [k for k in sim.world.xrs if k[0] == "ModelReplica"] == []
    assert used(sim, "solo") == {"gpu": "0/4"} and not ready(sim, "model")
    assert "solo: " in condition(sim, "model", "Scheduled")["message"]
