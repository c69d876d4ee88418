"""Builders for compose-inference-cluster: an XR, classes, replicas and observed
children with defaults (test_inference_cluster*.py and the usage tests share them)."""
from __future__ import annotations

import copy
from typing import Any

from tests.support import desired, request, run

FN = "compose-inference-cluster"

BLOCKS = {
    "GKE": {"gke": {"region": "us-central1", "project": "proj-1"}},
    "EKS": {"eks": {"region": "us-east-1", "subnetIds": ["subnet-a", "subnet-b"]}},
    "Existing": {"existing": {"kubeconfigSecretRef": {"namespace": "platform", "name": "prod-a-kubeconfig"}}},
}


def xr(source: str = "GKE", pools: list[dict] | None = None, name: str = "prod-a", **spec: Any) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": {"name": name},
            "spec": {"cluster": {"source": source, **copy.deepcopy(BLOCKS[source])},
                     "nodePools": pools if pools is not None else [pool()], **spec}}


def pool(name: str = "l4", cls: str = "l4-1x", count: int = 2, **extra: Any) -> dict:
    return {"name": name, "class": cls, "nodeCount": count, **extra}


def klass(name: str = "l4-1x", gke: dict | None = None, eks: dict | None = None, provisioning: bool = True) -> dict:
    prov = {}
    if provisioning:
        prov = {"gke": gke or {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4", "count": 1}},
                "eks": eks or {"instanceType": "g6.xlarge"}}
    spec = {"devices": [{"name": "gpu", "driver": "gpu.nvidia.com", "deviceClassName": "gpu.nvidia.com"}]}
    if prov:
        spec["provisioning"] = prov
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": name}, "spec": spec}


def replica(name: str, ns: str = "ml-team", order: str = "2026-01-01T00:00:00Z/ml-team/a/00000",
            placement: list[dict] | None = None, deployment: str = "qwen") -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelReplica",
            "metadata": {"name": name, "namespace": ns, "labels": {"modelplane.ai/cluster": "prod-a"}},
            "spec": {"deployment": deployment, "order": order,
                     "placement": placement if placement is not None else
                     [{"pool": "l4", "pods": [{"count": 1, "devices": {"gpu": 1}, "gang": False}]}]}}


def inputs(*classes: dict, replicas: list[dict] | None = None) -> dict[str, list[dict]]:
    out = {f"class-{c['metadata']['name']}": [c] for c in classes}
    out["modelreplicas"] = replicas or []
    return out


def ready(obj: dict, **status_extra: Any) -> dict:
    """An observed child: the desired object with a Ready=True condition."""
    out = copy.deepcopy(obj)
    out["status"] = {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}], **status_extra}
    return out


def compose(x: dict, required: dict | None = None, observed: dict | None = None):
    return run(FN, request(x, observed=observed, required=required))


def all_ready(x: dict, required: dict, address: str = "203.0.113.10") -> dict:
    """Observed state where every child is Ready and the remote Gateway has an address."""
    first = desired(compose(x, required))
    observed = {k: ready(v) for k, v in first.items()}
    gw = observed["gateway"]
    gw["status"]["atProvider"] = {"manifest": {**gw["spec"]["forProvider"]["manifest"],
                                               "status": {"addresses": [{"type": "IPAddress", "value": address}]}}}
    return observed
