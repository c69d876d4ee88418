"""A Secret the engine reads reaches exactly the clusters where the deployment's replicas run
(simulate, through the real functions): scale out and a second cluster gets its copy; scale in
and the cluster left behind loses it."""
from __future__ import annotations

import base64

import pytest
from modelplane.render import FunctionPool
from modelplane.simulate import sync
from modelplane.simulate.loop import load
from modelplane.workloads import secrets as S

from tests.simulate import fleets

TOKEN = base64.b64encode(b"hf_not-a-real-token").decode()


@pytest.fixture(scope="module")
def pool():
    with FunctionPool() as p:
        yield p


def chat(replicas: int) -> dict:
    return fleets.secret_reader("chat", replicas)


def hf_secret() -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "huggingface", "namespace": "ml-team"},
            "type": "Opaque", "data": {"token": TOKEN}}


def copies_by_cluster(world) -> dict[str, list[str]]:
    """cluster -> remote Secrets composed for it (namespace/name), over every ModelReplica."""
    out: dict[str, list[str]] = {}
    for key, state in world.xrs.items():
        if key[0] != "ModelReplica":
            continue
        for obj in state.composed.values():
            if S.is_copy(obj):
                meta = obj["spec"]["forProvider"]["manifest"]["metadata"]
                out.setdefault(sync.target(obj, key), []).append(f"{meta['namespace']}/{meta['name']}")
    return {c: sorted(set(v)) for c, v in sorted(out.items())}   # a copy's shell and data Objects name one Secret


def hosting(world) -> dict[str, str]:
    """replica name -> its cluster."""
    return {k[2]: s.obj["spec"]["cluster"]["name"] for k, s in world.xrs.items() if k[0] == "ModelReplica"}


def scale(sim, replicas: int) -> None:
    sim.world.apply(chat(replicas))
    sim.changes.mark(("ModelDeployment", "ml-team", "chat"))
    outcome = sim.run(max_rounds=100)
    assert outcome.converged, outcome.still_changing


def test_a_secret_follows_the_replicas_from_cluster_to_cluster(pool, tmp_path):
    # Two clusters of one single-GPU node each: a second replica must land on the other cluster.
    d = fleets.write(tmp_path / "f", fleets.gpu_class("h100-1x", count=1),
                     fleets.existing_cluster("east", [("gpu", "h100-1x", 1)]),
                     fleets.existing_cluster("west", [("gpu", "h100-1x", 1)]),
                     fleets.gateway(), chat(1), hf_secret())
    sim = load(d, pool)
    try:
        assert sim.run(max_rounds=100).converged
        (only,) = hosting(sim.world).items()
        assert copies_by_cluster(sim.world) == {only[1]: [f"ml-team/{S.copy_name(only[0], 'huggingface')}"]}

        scale(sim, 2)
        placed = hosting(sim.world)
        assert sorted(placed.values()) == ["east", "west"]
        assert copies_by_cluster(sim.world) == {
            cluster: [f"ml-team/{S.copy_name(name, 'huggingface')}"] for name, cluster in placed.items()}

        scale(sim, 1)
        (kept,) = hosting(sim.world).items()
        assert copies_by_cluster(sim.world) == {kept[1]: [f"ml-team/{S.copy_name(kept[0], 'huggingface')}"]}

        replica = sim.world.xrs[("ModelReplica", "ml-team", kept[0])].obj
        found = next(c for c in replica["status"]["conditions"] if c["type"] == S.SECRETS_FOUND)
        assert found["status"] == "True"
        assert TOKEN not in str(replica) and TOKEN not in str(sim.world.xrs[("ModelReplica", "ml-team",
                                                                             kept[0])].composed)
    finally:
        sim.close()


def test_a_missing_secret_is_reported_and_the_replica_still_runs(pool, tmp_path):
    d = fleets.write(tmp_path / "f", fleets.gpu_class("h100-1x", count=1),
                     fleets.existing_cluster("east", [("gpu", "h100-1x", 1)]), fleets.gateway(), chat(1))
    sim = load(d, pool)
    try:
        assert sim.run(max_rounds=100).converged
        ((name, _),) = hosting(sim.world).items()
        state = sim.world.xrs[("ModelReplica", "ml-team", name)]
        found = next(c for c in state.obj["status"]["conditions"] if c["type"] == S.SECRETS_FOUND)
        assert (found["status"], found["reason"]) == ("False", "NotFound")
        assert "kubectl -n ml-team create secret generic huggingface --from-literal=token=<value>" in found["message"]
        kinds = sorted(o["spec"]["forProvider"]["manifest"]["kind"] for o in state.composed.values()
                       if o["kind"] == "Object")
        assert "Deployment" in kinds and "Secret" not in kinds
    finally:
        sim.close()
