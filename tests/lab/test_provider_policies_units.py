"""``simulate --lab`` applies to the lab's clusters only what provider-kubernetes would (no lab
needed: an in-memory stand-in for the clusters' API servers): an Observe-only Object's remote
object is never created, and the Object reports ``Synced=False`` as the provider does."""
from __future__ import annotations

import copy

from modelplane.lab import backend, remote
from modelplane.lab.state import LabState
from modelplane.objects import remote_object
from modelplane.simulate.codec import CachingCodec
from modelplane.simulate.sync import ClusterSync
from modelplane.simulate.tracking import Changes
from modelplane.simulate.world import Key, World, XRState
from modelplane.workloads import engine_status
from modelplane.workloads import secrets as S


def _cond(obj, typ):
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == typ), {})


class _Client:
    server = "https://198.18.0.1:6443"

    def get(self, path):
        return {"items": []}


class _MemoryRemote:
    """Lab clusters whose API servers keep what is applied, in memory."""

    def __init__(self, names):
        self.state = LabState(directory="d", root="r")
        self.clients = {n: _Client() for n in names}
        self.held: dict[str, dict] = {n: {} for n in names}
        self.applied: dict[str, set] = {n: set() for n in names}   # every key ever applied

    def has(self, name):
        return name in self.clients

    def sync(self, name, wanted):
        self.held[name] = {k: copy.deepcopy(m) for k, (m, _) in wanted.items()}
        self.applied[name] |= set(wanted)
        return {k: remote.Applied(copy.deepcopy(m)) for k, (m, _) in wanted.items()}

    def settle(self, clusters=None, timeout=0.0):
        return []

    def read(self, name, manifest):
        return copy.deepcopy(self.held[name].get(backend._full_key(manifest)))

    def placements(self, name):
        return []


def _world() -> tuple[World, Key]:
    cluster = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": {"name": "solo"},
               "spec": {"provider": "Existing"}}
    owner: Key = ("ModelReplica", "ml-team", "chat-0-solo")
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "chat", "namespace": "ml-team"},
                  "spec": {"replicas": 1}}
    composed = {
        "report": remote_object("report", engine_status.report_manifest("chat", 0, "ml-team"), "solo",
                                namespace="ml-team", management_policies=["Observe"]),
        "deployment": remote_object("deployment", deployment, "solo", namespace="ml-team"),
        **S.copy_objects("chat-0-solo", "ml-team", "huggingface", "Opaque", "solo", {}),
    }
    world = World(others=[{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                           "metadata": {"name": "huggingface", "namespace": "ml-team"},
                           "data": {"token": "aGZfbm90LXJlYWw="}}])
    world.xrs[("InferenceCluster", "", "solo")] = XRState(obj=cluster)
    world.xrs[owner] = XRState(obj={"kind": "ModelReplica", "metadata": {"name": owner[2], "namespace": "ml-team"}},
                               composed=composed)
    return world, owner


def test_the_lab_applies_only_what_the_provider_would():
    fake = _MemoryRemote(["solo"])
    physical = backend.LabPhysical(fake, reset=False)
    physical._check_hardware = lambda name, hardware: None   # the in-memory cluster has no nodes
    world, owner = _world()
    clusters = ClusterSync(world, Changes(world), CachingCodec(), physical=physical)
    for name in world.xrs[owner].composed:
        clusters.retarget(owner, name, None, "solo")
    clusters.stale.add("solo")
    clusters.settle()
    composed = world.xrs[owner].composed

    held = {k[1:]: m for k, m in fake.held["solo"].items()}
    report = engine_status.report_name("chat", 0)
    assert ("ConfigMap", "ml-team", report) not in {k[1:] for k in fake.applied["solo"]}
    synced = _cond(composed["report"], "Synced")
    assert (synced["status"], synced["message"]) == ("False", "observe failed: external resource does not exist")
    assert _cond(composed["report"], "Ready")["status"] == "False"
    assert ("Deployment", "ml-team", "chat") in held
    # The copy: created by the shell, its data patched in from the control-plane Secret.
    (copy_key,) = [k for k in held if k[0] == "Secret"]
    assert held[copy_key]["data"] == {"token": "aGZfbm90LXJlYWw="}

    # The control-plane Secret goes: the data Object fails to resolve it; the copy keeps its data.
    world.others = []
    clusters.stale.add("solo")
    clusters.settle()
    data = world.xrs[owner].composed[S.data_name("chat-0-solo", "huggingface")]
    assert _cond(data, "Synced")["message"] == ('observe failed: cannot resolve resource references: '
                                                'cannot get referenced resource: secrets "huggingface" not found')
    assert {k[1:]: m for k, m in fake.held["solo"].items()}[copy_key]["data"] == {"token": "aGZfbm90LXJlYWw="}
