"""The physical model of a workload cluster: nodes, DRA devices, pods bound by kube-scheduler rules."""
from __future__ import annotations

import pytest
from modelplane.physical import hardware as nodes
from modelplane.physical import simulated as physical
from modelplane.validate.upstream import UpstreamSchemas

NOW = "2026-01-01T00:00:00Z"
LATER = "2026-01-01T00:20:00Z"


def gpu_class(count: int = 8, memory: str = "80Gi", driver: str = "gpu.nvidia.com") -> dict:
    return {"devices": [{"name": "gpu", "driver": driver, "count": count, "deviceClassName": driver,
                         "attributes": {"architecture": {"string": "Hopper"}},
                         "capacity": {"memory": {"value": memory}}}]}


def cluster(pools: list[tuple[str, str, int]], source: str = "Existing", taints: list[dict] | None = None) -> dict:
    block = {"existing": {"kubeconfigSecretRef": {"namespace": "ns", "name": "kc", "key": "k"}}} \
        if source == "Existing" else {"gke": {"region": "r", "project": "p"}}
    spec = {"cluster": {"source": source, **block},
            "nodePools": [{"name": n, "class": c, "nodeCount": k} for n, c, k in pools]}
    if taints:
        spec["taints"] = taints
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": {"name": "c"}, "spec": spec}


def claim(name: str, count: int, cel: str = "", device_class: str = "gpu.nvidia.com") -> dict:
    exactly = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}
    if cel:
        exactly["selectors"] = [{"cel": {"expression": cel}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def pod_spec(pool: str, claim_name: str | None, image: str = "vllm:1") -> dict:
    spec = {"containers": [{"name": "engine", "image": image}], "nodeSelector": {"modelplane.ai/pool": pool},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}
    if claim_name:
        spec["resourceClaims"] = [{"name": "devices", "resourceClaimTemplateName": claim_name}]
        spec["containers"][0]["resources"] = {"claims": [{"name": "devices"}]}
    return spec


def deployment(name: str, replicas: int, pool: str, claim_name: str | None, **template) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "ml"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec(pool, claim_name, **template)}}}


def lws(name: str, size: int, pool: str, claim_name: str) -> dict:
    tmpl = {"metadata": {"labels": {"app": name}}, "spec": pod_spec(pool, claim_name)}
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": size, "leaderTemplate": tmpl, "workerTemplate": tmpl}}}


def keyed(*manifests: dict) -> dict:
    return {(m["kind"], m["metadata"].get("namespace", ""), m["metadata"]["name"]): m for m in manifests}


def settle(model: physical.Physical, hw_cluster: dict, classes: dict, *manifests: dict, now: str = NOW,
           ready_pools: set[str] | None = None) -> physical.WorkloadCluster:
    hw = nodes.build(hw_cluster, classes, ready_pools)
    return model.sync("c", hw, nodes.fingerprint(hw_cluster, classes, ready_pools), keyed(*manifests), now)


# ----- hardware -----------------------------------------------------------------------
def test_each_pool_node_publishes_its_class_devices_and_unknown_classes_publish_none():
    hw = nodes.build(cluster([("h100", "h100-8x", 2), ("mystery", "nope", 1)]), {"h100-8x": gpu_class()})
    assert [(n.name, n.pool, len(n.devices)) for n in hw.nodes] == [("h100-0", "h100", 8), ("h100-1", "h100", 8),
                                                                     ("mystery-0", "mystery", 0)]
    assert [d.name for d in hw.nodes[0].devices] == [f"gpu-{i}" for i in range(8)]
    assert hw.device_classes == {"gpu.nvidia.com": ('device.driver == "gpu.nvidia.com"',)}
    assert hw.pool_devices() == {"h100": 16, "mystery": 0}


def test_a_pool_has_no_nodes_until_its_node_pool_is_up_and_gpu_pools_on_gke_are_tainted():
    doc = cluster([("l4", "l4", 3), ("a100", "a100", 2)], source="GKE")
    hw = nodes.build(doc, {"l4": gpu_class(1), "a100": gpu_class()}, ready_pools={"a100"})
    assert [n.pool for n in hw.nodes] == ["a100", "a100"]
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in hw.nodes[0].taints


# ----- binding ------------------------------------------------------------------------------
def test_pods_bind_to_devices_their_claim_cel_accepts_in_creation_order():
    model = physical.Physical()
    big = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'
    c = settle(model, cluster([("p", "k", 1)]), {"k": gpu_class(8)},
               claim("five", 5, big), deployment("first", 1, "p", "five"))
    c = settle(model, cluster([("p", "k", 1)]), {"k": gpu_class(8)},
               claim("five", 5, big), deployment("first", 1, "p", "five"), deployment("second", 1, "p", "five"))
    assert [(u.pool, u.used, u.total) for u in c.capacity()] == [("p", 5, 8)]
    pending = c.pending()
    assert [(p.owner, p.pod.startswith("second-")) for p in pending] == [("Deployment/ml/second", True)]
    assert pending[0].reason == "0/1 nodes are available: 1 node(s) cannot allocate all claims (request gpu: 5 wanted, 3 of 3 free match)."
    first = c.status(("Deployment", "ml", "first"), NOW)
    second = c.status(("Deployment", "ml", "second"), NOW)
    assert first["availableReplicas"] == 1 and _cond(first, "Available") == "True"
    assert "availableReplicas" not in second and _cond(second, "Available") == "False"
    # Deleting the first releases its devices: the second binds.
    c = settle(model, cluster([("p", "k", 1)]), {"k": gpu_class(8)}, claim("five", 5, big),
               deployment("second", 1, "p", "five"))
    assert c.pending() == [] and c.capacity()[0].used == 5


def test_devices_the_claim_cel_rejects_leave_the_pod_pending_with_the_selector_named():
    model = physical.Physical()
    c = settle(model, cluster([("p", "k", 2)]), {"k": gpu_class(8, memory="24Gi")},
               claim("big", 1, 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'),
               deployment("d", 1, "p", "big"))
    assert c.pending()[0].reason == ("0/2 nodes are available: 2 node(s) cannot allocate all claims "
                                     "(request gpu: 1 wanted, 0 of 8 free match; others: selector 1 false).")
    assert c.capacity()[0].used == 0


def test_a_device_class_the_cluster_does_not_have_and_a_missing_template_keep_pods_pending():
    model = physical.Physical()
    c = settle(model, cluster([("p", "k", 1)]), {"k": gpu_class()},
               claim("amd", 1, device_class="gpu.amd.com"), deployment("d", 1, "p", "amd"),
               deployment("e", 1, "p", "absent"))
    reasons = {p.owner: p.reason for p in c.pending()}
    assert "request gpu: DeviceClass 'gpu.amd.com' does not exist" in reasons["Deployment/ml/d"]
    assert reasons["Deployment/ml/e"] == 'resourceclaimtemplate "absent" not found'


def test_node_selector_and_taints_are_respected():
    model = physical.Physical()
    # The GPU taint of a GKE node pool is on the nodes; the cluster's own taints are not.
    doc = cluster([("a", "k", 1), ("b", "k", 1)], source="GKE", taints=[{"key": "maintenance", "effect": "NoSchedule"}])
    untolerated = deployment("d", 1, "a", None)
    untolerated["spec"]["template"]["spec"]["tolerations"] = []
    c = settle(model, doc, {"k": gpu_class()}, untolerated, deployment("wrong-pool", 1, "zzz", None))
    reasons = {p.owner: p.reason for p in c.pending()}
    assert reasons["Deployment/ml/d"] == ("0/2 nodes are available: 1 node(s) didn't match Pod's node "
                                          "affinity/selector, 1 node(s) had untolerated taint {nvidia.com/gpu: present}.")
    assert reasons["Deployment/ml/wrong-pool"] == ("0/2 nodes are available: "
                                                   "2 node(s) didn't match Pod's node affinity/selector.")


def test_a_gang_binds_all_or_none_on_distinct_nodes():
    model = physical.Physical()
    c = settle(model, cluster([("p", "k", 2)]), {"k": gpu_class()}, claim("eight", 8), lws("g", 3, "p", "eight"))
    pending = c.pending()
    assert len(pending) == 3 and c.capacity()[0].used == 0
    assert pending[0].reason.startswith("gang of 3 binds all or none: pod g-0-2: 0/2 nodes are available: ")
    status = c.status(("LeaderWorkerSet", "ml", "g"), NOW)
    assert "readyReplicas" not in status and _cond(status, "Available") == "False"
    c = settle(model, cluster([("p", "k", 3)]), {"k": gpu_class()}, claim("eight", 8), lws("g", 3, "p", "eight"))
    assert c.pending() == [] and c.capacity()[0].used == 24
    assert len({p.node for p in c.pods()}) == 3
    assert c.status(("LeaderWorkerSet", "ml", "g"), NOW)["readyReplicas"] == 1


def test_a_job_completes_only_once_its_pod_ran():
    model = physical.Physical()
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "ml"},
           "spec": {"template": {"spec": {**pod_spec("p", None), "restartPolicy": "Never"}}}}
    stuck = {**job, "spec": {"template": {"spec": {**pod_spec("elsewhere", None), "restartPolicy": "Never"}}}}
    c = settle(model, cluster([("p", "k", 1)]), {"k": gpu_class()}, stuck)
    assert "conditions" not in c.status(("Job", "ml", "j"), NOW) and c.status(("Job", "ml", "j"), NOW)["active"] == 1
    model = physical.Physical()
    c = settle(model, cluster([("p", "k", 1)]), {"k": gpu_class()}, job)
    status = c.status(("Job", "ml", "j"), NOW)
    assert status["succeeded"] == 1 and _cond(status, "Complete") == "True" and c.pending() == []


def test_pods_on_devices_that_vanish_are_recreated_and_wait():
    model = physical.Physical()
    c = settle(model, cluster([("p", "k", 1)]), {"k": gpu_class(8)}, claim("six", 6), deployment("d", 1, "p", "six"))
    assert c.capacity()[0].used == 6
    c = settle(model, cluster([("p", "k", 1)]), {"k": gpu_class(4)}, claim("six", 6), deployment("d", 1, "p", "six"))
    assert [(u.used, u.total) for u in c.capacity()] == [(0, 4)]
    assert len(c.pending()) == 1 and "6 wanted, 4 of 4 free match" in c.pending()[0].reason


def test_a_new_revision_rolls_within_the_surge_and_keeps_the_old_pod_until_the_new_one_binds():
    model = physical.Physical()
    doc, classes = cluster([("p", "k", 1)]), {"k": gpu_class(8)}
    settle(model, doc, classes, claim("six", 6), deployment("d", 1, "p", "six", image="v1"))
    c = settle(model, doc, classes, claim("six", 6), deployment("d", 1, "p", "six", image="v2"))
    # No room for the surge pod: the old pod keeps serving, the rollout waits.
    status = c.status(("Deployment", "ml", "d"), NOW)
    assert (status["replicas"], status["updatedReplicas"], status["availableReplicas"]) == (2, 1, 1)
    assert _cond(status, "Available") == "True" and _reason(status, "Progressing") == "ReplicaSetUpdated"
    assert _reason(c.status(("Deployment", "ml", "d"), LATER), "Progressing") == "ProgressDeadlineExceeded"
    # With room, the new pod binds and the old one goes.
    c = settle(model, doc, {"k": gpu_class(16)}, claim("six", 6), deployment("d", 1, "p", "six", image="v2"))
    status = c.status(("Deployment", "ml", "d"), LATER)
    assert (status["replicas"], status["updatedReplicas"], status["availableReplicas"]) == (1, 1, 1)
    assert _reason(status, "Progressing") == "NewReplicaSetAvailable"


def test_workload_statuses_pass_their_upstream_schemas():
    model = physical.Physical()
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "ml"},
           "spec": {"template": {"spec": {**pod_spec("p", None), "restartPolicy": "Never"}}}}
    manifests = [claim("eight", 8), deployment("d", 2, "p", "eight"), lws("g", 2, "p", "eight"), job]
    c = settle(model, cluster([("p", "k", 3)]), {"k": gpu_class()}, *manifests)
    schemas = UpstreamSchemas.load()
    checked = 0
    for m in manifests[1:]:
        key = (m["kind"], "ml", m["metadata"]["name"])
        problems = schemas.validate({**m, "status": c.status(key, NOW)})
        assert problems == [], (key, problems)
        checked += 1
    assert checked == 3


@pytest.mark.parametrize("count", [0, 1])
def test_scaling_down_removes_pods_that_never_bound_first(count):
    model = physical.Physical()
    doc, classes = cluster([("p", "k", 1)]), {"k": gpu_class(8)}
    c = settle(model, doc, classes, claim("six", 6), deployment("d", 2, "p", "six"))
    assert len(c.pending()) == 1
    c = settle(model, doc, classes, claim("six", 6), deployment("d", 1 + count, "p", "six"))
    assert len(c.pending()) == count and c.capacity()[0].used == 6


def _cond(status: dict, typ: str) -> str:
    return next(c["status"] for c in status.get("conditions") or [] if c["type"] == typ)


def _reason(status: dict, typ: str) -> str:
    return next(c["reason"] for c in status.get("conditions") or [] if c["type"] == typ)
