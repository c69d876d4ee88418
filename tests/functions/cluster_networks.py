"""Builders for the networks compose-inference-cluster composes: a cluster a new
user would write (EKS with only a region, GKE with only a region, AKS with only
a location), classes that provision on every cloud, and what AKS reports back."""
from __future__ import annotations

import copy
from typing import Any

from tests.functions.clusters import pool

GPU_CLASS = {"name": "gpu", "driver": "gpu.nvidia.com", "deviceClassName": "gpu.nvidia.com"}


def klass(name: str = "l4-1x", **prov: dict) -> dict:
    provisioning = prov or {"gke": {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4", "count": 1}},
                            "eks": {"instanceType": "g6.xlarge"},
                            "aks": {"vmSize": "Standard_NC24ads_A100_v4"}}
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": name},
            "spec": {"devices": [dict(GPU_CLASS)], "provisioning": provisioning}}


def inputs(*classes: dict) -> dict[str, list[dict]]:
    out = {f"class-{c['metadata']['name']}": [c] for c in (classes or (klass(),))}
    out["modelreplicas"] = []
    return out


def cluster(source: str, block: dict, pools: list[dict] | None = None, name: str = "prod-a") -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": {"name": name},
            "spec": {"cluster": {"source": source, source.lower(): copy.deepcopy(block)},
                     "nodePools": pools if pools is not None else [pool()]}}


def eks(pools: list[dict] | None = None, **block: Any) -> dict:
    return cluster("EKS", {"region": "us-east-1", **block}, pools)


def gke(pools: list[dict] | None = None, **block: Any) -> dict:
    return cluster("GKE", {"region": "us-central1", "project": "proj-1", **block}, pools)


def aks(pools: list[dict] | None = None, **block: Any) -> dict:
    return cluster("AKS", {"location": "eastus2", **block}, pools)


# What AKS reports once the cluster and subnet exist: the cluster identity's principal, the subnet's id.
AKS_OBSERVED = {
    "cluster": {"status": {"atProvider": {"identity": {"principalId": "00000000-0000-0000-0000-0000000000aa"}}}},
    "net-subnet": {"status": {"atProvider": {"id": "/subscriptions/s/resourceGroups/prod-a-rg/providers/"
                                                   "Microsoft.Network/virtualNetworks/prod-a-vnet/subnets/prod-a-nodes"}}},
}
