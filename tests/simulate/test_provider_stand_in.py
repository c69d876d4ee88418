"""simulate plays provider-kubernetes and the kubelet as they are: a replica whose Secret does not
exist never becomes Ready (its pod waits in CreateContainerConfigError) until the control-plane
Secret appears and its copy gets the data; an Observe-only Object creates nothing and reports
Synced=False, and the replica does not wait for it."""
from __future__ import annotations

import pytest
from modelplane.objects import manifest_of
from modelplane.render import FunctionPool
from modelplane.simulate.loop import load

from tests.simulate import fleets


def chat(replicas: int) -> dict:
    return fleets.secret_reader("chat", replicas)


def hf_secret() -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "huggingface", "namespace": "ml-team"},
            "type": "Opaque", "stringData": {"token": "hf_not-a-real-token"}}


def hosting(world) -> dict[str, str]:
    """replica name -> its cluster."""
    return {k[2]: s.obj["spec"]["cluster"]["name"] for k, s in world.xrs.items() if k[0] == "ModelReplica"}


@pytest.fixture(scope="module")
def pool():
    with FunctionPool() as p:
        yield p


def cond(obj: dict, typ: str) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == typ), {})


def replica(sim) -> tuple[str, dict]:
    ((name, _),) = hosting(sim.world).items()
    return name, sim.world.xrs[("ModelReplica", "ml-team", name)]


def one_cluster(tmp_path, *extra: dict):
    return fleets.write(tmp_path / "f", fleets.gpu_class("h100-1x", count=1),
                        fleets.existing_cluster("east", [("gpu", "h100-1x", 1)]), fleets.gateway(), chat(1), *extra)


def test_a_replica_whose_secret_is_missing_is_not_ready_until_the_secret_appears(pool, tmp_path):
    sim = load(one_cluster(tmp_path), pool)
    try:
        assert sim.run(max_rounds=100).converged
        _, state = replica(sim)
        assert cond(state.obj, "Ready").get("status") == "False"
        pending = [p for p in sim.clusters.physical.clusters["east"].pending() if "chat" in p.owner]
        assert pending and all('CreateContainerConfigError: secret "' in p.reason for p in pending), pending

        sim.add_other(hf_secret())
        assert sim.run(max_rounds=100).converged
        _, state = replica(sim)
        assert cond(state.obj, "SecretsFound").get("status") == "True"
        assert cond(state.obj, "Ready").get("status") == "True"
        assert not [p for p in sim.clusters.physical.clusters["east"].pending() if "chat" in p.owner]
    finally:
        sim.close()


def test_an_observe_only_object_creates_nothing_and_is_not_synced(pool, tmp_path):
    sim = load(one_cluster(tmp_path, hf_secret()), pool)
    try:
        assert sim.run(max_rounds=100).converged
        _, state = replica(sim)
        observe = [o for o in state.composed.values()
                   if o["kind"] == "Object" and o["spec"].get("managementPolicies") == ["Observe"]]
        assert observe, "the replica composes the engine report's Observe-only Object"
        for obj in observe:
            synced = cond(obj, "Synced")
            assert (synced["status"], synced["message"]) == ("False", "observe failed: external resource does not exist")
            assert "atProvider" not in obj["status"]
            kind, name = manifest_of(obj)["kind"], manifest_of(obj)["metadata"]["name"]
            held = sim.clusters._plans["east"].held
            assert (kind, "ml-team", name) not in held
        # The replica does not wait for a report nothing writes in simulate.
        assert cond(state.obj, "Ready").get("status") == "True"
    finally:
        sim.close()
