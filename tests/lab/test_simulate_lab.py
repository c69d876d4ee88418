"""simulate --lab: the fleet's composed workloads on real API servers, kube-scheduler with DRA and kwok.

One lab (conftest ``lab``) serves every test; each simulate run starts from emptied clusters.
The judge is the real scheduler: every pod must run on a node of the pool the fleet scheduler
chose, holding the devices its claim asked for; and simulate (its physical model) must say the
same as the lab about placements, readiness and capacity.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from modelplane import paths
from modelplane.lab.backend import LabPhysical
from modelplane.lab.remote import Remote
from modelplane.simulate import report
from modelplane.simulate.loop import simulate
from modelplane.validate.admission import load_dir

from tests.lab.lab_fleet import SOLO

pytestmark = [pytest.mark.slow, pytest.mark.lab]

FLEET = paths.EXAMPLES / "fleet"
ROLES = {"standalone": "Standalone", "leader": "Leader", "worker": "Worker"}


def _run(directory: Path, state=None):
    if state is None:
        world, outcome, sim = simulate(directory)
        return world, outcome, sim, None
    remote = Remote(state)
    world, outcome, sim = simulate(directory, physical=LabPhysical(remote))
    return world, outcome, sim, remote


@pytest.fixture(scope="module")
def fleet_runs(lab):
    """examples/fleet through the physical model and through the lab."""
    return {"model": _run(FLEET), "lab": _run(FLEET, lab)}


@pytest.fixture(scope="module")
def solo_runs(lab):
    return {"model": _run(SOLO), "lab": _run(SOLO, lab)}


def _placements(world) -> list[list[str]]:
    """The placements table without addresses: whether an endpoint exists, not where."""
    rows = []
    for line in report.placements(world)[1:]:
        cols = line.split()
        if cols and "/" in cols[0] and not line.startswith(" "):
            rows.append([*cols[:-1], "endpoint" if cols[-1].startswith("http") else cols[-1]])
    return rows


def _ready(world) -> dict[str, str]:
    return dict(line.split("  READY=") for line in report.conditions(world) if "  READY=" in line)


def _capacity(sim) -> tuple[set, int]:
    uses = {(name, u.pool, u.used, u.total) for name, c in sim.physical.clusters.items() for u in c.capacity()}
    pending = sum(len(c.pending()) for c in sim.physical.clusters.values())
    return uses, pending


def _chosen_pools(world) -> dict[tuple[str, str, str, str], str]:
    """(deployment, replica index, engine, role) -> the pool the fleet scheduler chose."""
    out = {}
    for (kind, _ns, name), state in world.xrs.items():
        if kind != "ModelDeployment":
            continue
        for p in (state.obj.get("status") or {}).get("placements") or []:
            for m in p.get("members") or []:
                out[(name, str(p.get("index")), m.get("engine"), m.get("role"))] = (p.get("cluster"), m.get("pool"))
    return out


def test_example_fleet_runs_on_the_pools_the_fleet_scheduler_chose(fleet_runs):
    world, outcome, _, remote = fleet_runs["lab"]
    assert outcome.converged, outcome.still_changing
    not_ready = {k: v for k, v in _ready(world).items() if v != "True"}
    assert not_ready == {}
    chosen = _chosen_pools(world)
    assert len(chosen) >= 6
    seen = set()
    for cluster in sorted(remote.clients):
        client = remote.clients[cluster]
        held: list[tuple[str, str]] = []
        for pod in remote.placements(cluster):
            assert pod["phase"] in ("Running", "Succeeded"), (cluster, pod["name"], pod["phase"], pod["reason"])
            labels = pod["labels"]
            if "modelplane.ai/role" not in labels:
                continue  # endpoint pickers and cache hydration: no devices, any node
            key = (labels["modelplane.ai/deployment"], labels["modelplane.ai/replica"],
                   labels["modelplane.ai/engine"], ROLES[labels["modelplane.ai/role"]])
            assert chosen[key] == (cluster, pod["pool"]), (pod["name"], chosen[key], cluster, pod["pool"])
            seen.add(key)
            # The devices its claim template asks for, allocated on its own node.
            want = 0
            for name in pod["claimTemplates"]:
                rct = client.get(f"/apis/resource.k8s.io/v1/namespaces/{pod['namespace']}/resourceclaimtemplates/{name}")
                want += sum(r["exactly"]["count"] for r in rct["spec"]["spec"]["devices"]["requests"])
            assert want > 0
            assert len(pod["devices"]) == want, pod
            assert {d["pool"] for d in pod["devices"]} == {pod["node"]}
            held += [(pod["node"], d["device"]) for d in pod["devices"]]
        assert len(held) == len(set(held)), f"{cluster}: a device is allocated twice"
    assert seen == set(chosen)  # every member the fleet scheduler placed has its pods running


def test_simulate_and_the_lab_agree_on_the_example_fleet(fleet_runs):
    m_world, m_outcome, m_sim, _ = fleet_runs["model"]
    l_world, l_outcome, l_sim, _ = fleet_runs["lab"]
    assert m_outcome.converged and l_outcome.converged
    assert _placements(l_world) == _placements(m_world)
    assert _ready(l_world) == _ready(m_world)
    assert _capacity(l_sim) == _capacity(m_sim)


def test_two_deployments_one_pool_end_with_nothing_pending(solo_runs):
    world, outcome, sim, remote = solo_runs["lab"]
    assert outcome.converged, outcome.still_changing
    ready = _ready(world)
    placed = {r[0]: r[2] for r in _placements(world)}
    # Exactly one of the two 5-GPU deployments fits the 8-GPU node.
    assert sorted(v for k, v in placed.items() if "five-gpus" in k) == ["-", "solo"]
    winner = next(k for k, v in placed.items() if v == "solo").split("/")[1]
    assert ready[f"ModelDeployment/ml-team/{winner}"] == "True"
    pods = remote.placements("solo")
    assert [p["name"] for p in pods if p["phase"] == "Pending"] == []
    assert len([p for p in pods if p["labels"].get("modelplane.ai/deployment") == winner]) == 5
    assert {(u.pool, u.used, u.total) for u in sim.physical.clusters["solo"].capacity()} == {("gpu", 5, 8)}


def test_a_selector_no_device_matches_places_nothing_and_creates_nothing(solo_runs):
    world, _, _, remote = solo_runs["lab"]
    assert {r[0]: r[2] for r in _placements(world)}["ml-team/nowhere"] == "-"
    client = remote.clients["solo"]
    for path in ("/apis/apps/v1/deployments", "/apis/resource.k8s.io/v1/resourceclaimtemplates", "/api/v1/pods",
                 "/api/v1/services", "/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets"):
        items = client.get(path).get("items") or []
        assert [i["metadata"]["name"] for i in items if "nowhere" in i["metadata"]["name"]] == [], path


def test_simulate_and_the_lab_agree_on_the_solo_fleet(solo_runs):
    m_world, _, m_sim, _ = solo_runs["model"]
    l_world, _, l_sim, _ = solo_runs["lab"]
    assert _placements(l_world) == _placements(m_world)
    assert _ready(l_world) == _ready(m_world)
    assert _capacity(l_sim) == _capacity(m_sim)


WRONG_CLASS = Path(__file__).resolve().parent / "fleets" / "wrong-class"


def test_pods_the_real_scheduler_cannot_bind_stay_pending_and_block_readiness(lab):
    """The class says H200, the lab's node publishes H100s: placed by the fleet scheduler, Pending on
    the cluster, not Ready; simulate with --hardware (the real class) says the same."""
    world, outcome, sim, _ = _run(WRONG_CLASS, lab)
    assert outcome.converged, outcome.still_changing
    assert {r[0]: r[2] for r in _placements(world)}["ml-team/wants-h200"] == "solo"
    assert _ready(world)["ModelDeployment/ml-team/wants-h200"] == "False"
    pending = sim.physical.clusters["solo"].pending()
    assert len(pending) == 1 and "cannot allocate all claims" in pending[0].reason
    assert pending[0].owner.startswith("Deployment/ml-team/wants-h200")
    real = next(d for d in load_dir(SOLO)[0] if d["kind"] == "InferenceClass")
    m_world, _, m_sim = simulate(WRONG_CLASS, hardware={"h100-8x": real["spec"]})
    assert _placements(world) == _placements(m_world)
    assert _ready(world) == _ready(m_world)
    assert [p.owner for p in m_sim.physical.clusters["solo"].pending()] == [p.owner for p in pending]
