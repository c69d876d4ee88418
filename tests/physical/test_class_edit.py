"""A class edit under bound pods, in the kube-scheduler stand-in: the parity the fleet scheduler keeps.

kube-scheduler evaluates a claim's CEL selectors only while allocating it; an allocated claim
contributes nothing but its allocation's node selector (Kubernetes v1.35.4,
pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go:442-451). So when the
ResourceSlice's attributes change under a running pod (the H100 class corrected from 80Gi to the
81559Mi NVIDIA's driver publishes), the pod keeps its devices, and only a new pod is refused. The
fleet scheduler does the same one level up (tests/scheduler/test_mismatch.py): the replica is
held, no new replica goes there.
"""
from __future__ import annotations

from modelplane.physical import hardware as nodes
from modelplane.physical import simulated as physical

AT_LEAST_80GI = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0'
POOL = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": {"name": "c"},
        "spec": {"cluster": {"source": "Existing",
                             "existing": {"kubeconfigSecretRef": {"namespace": "ns", "name": "kc", "key": "k"}}},
                 "nodePools": [{"name": "h100", "class": "h100", "nodeCount": 1}]}}


def _class(count: int = 8, memory: str = "80Gi") -> dict:
    return {"h100": {"devices": [{"name": "gpu", "driver": "gpu.nvidia.com", "count": count,
                                  "deviceClassName": "gpu.nvidia.com",
                                  "attributes": {"productName": {"string": "NVIDIA H100 80GB HBM3"}},
                                  "capacity": {"memory": {"value": memory}}}]}}


def _claim(count: int, cel: str = "") -> dict:
    exactly = {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": count}
    if cel:
        exactly["selectors"] = [{"cel": {"expression": cel}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpus", "namespace": "ml"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def _deployment(replicas: int) -> dict:
    pod = {"containers": [{"name": "engine", "image": "vllm:1", "resources": {"claims": [{"name": "devices"}]}}],
           "nodeSelector": {"modelplane.ai/pool": "h100"},
           "resourceClaims": [{"name": "devices", "resourceClaimTemplateName": "gpus"}]}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "chat", "namespace": "ml"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "chat"}},
                     "template": {"metadata": {"labels": {"app": "chat"}}, "spec": pod}}}


def _settle(model: physical.Physical, classes: dict, *manifests: dict) -> physical.WorkloadCluster:
    """The cluster with the hardware ``classes`` describe, holding exactly ``manifests``, settled."""
    keyed = {(m["kind"], m["metadata"]["namespace"], m["metadata"]["name"]): m for m in manifests}
    hw = nodes.build(POOL, classes)
    return model.sync("c", hw, nodes.fingerprint(POOL, classes, None), keyed, "2026-01-01T00:00:00Z")


def _bound(c: physical.WorkloadCluster) -> list[tuple]:
    """Each bound pod as (name, creation number, node, devices): a restart changes the number."""
    return sorted((p.name, p.seq, p.node, p.devices) for p in c.pods() if p.bound)


def test_a_bound_pod_keeps_its_devices_when_their_attributes_stop_matching_its_claim():
    model = physical.Physical()
    wants = _claim(1, AT_LEAST_80GI)
    c = _settle(model, _class(memory="80Gi"), wants, _deployment(1))
    before = _bound(c)
    assert len(before) == 1 and c.pending() == []
    c = _settle(model, _class(memory="81559Mi"), wants, _deployment(1))
    assert _bound(c) == before and c.pending() == []
    # A new pod with the same claim is allocated against the new attributes: refused.
    c = _settle(model, _class(memory="81559Mi"), wants, _deployment(2))
    assert _bound(c) == before
    [pending] = c.pending()
    assert "request gpu: 1 wanted, 0 of 7 free match; others: selector 1 false" in pending.reason


def test_devices_that_disappear_still_take_their_pods_with_them():
    # The other side of the line the fleet scheduler draws: fewer devices per node is not an
    # attribute change; the pods on the devices gone are lost (its eviction rule for counts).
    model = physical.Physical()
    c = _settle(model, _class(8), _claim(8), _deployment(1))
    assert len(_bound(c)) == 1
    c = _settle(model, _class(4), _claim(8), _deployment(1))
    assert _bound(c) == [] and len(c.pending()) == 1
