"""Builders for the neocloud cluster sources of compose-inference-cluster (Nebius, Vultr):
clusters a new user would write, classes that provision there, and the Nebius
ClusterProviderConfig the cluster reads its service-account key from."""
from __future__ import annotations

import copy
from typing import Any

from tests.functions.cluster_networks import GPU_CLASS
from tests.functions.clusters import pool

CLOUD_CONFIG = "cloud-provider-config"  # the requirement key compose-inference-cluster asks under
H200 = {"platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb"}
L40S = {"plan": "vcg-l40s-16c-180g-48vram"}
# The Secret examples/platform/provider-config-nebius.yaml names.
KEY_SECRET = {"namespace": "crossplane-system", "name": "nebius-credentials", "key": "credentials.json"}


def klass(name: str = "gpu-1x", **prov: dict) -> dict:
    """A class provisioning on the clouds named in ``prov`` (default: a Nebius H200 and a Vultr L40S)."""
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": name},
            "spec": {"devices": [dict(GPU_CLASS)],
                     "provisioning": prov or {"nebius": dict(H200), "vultr": dict(L40S)}}}


def gpu_pool(name: str = "gpu", count: int = 2, cls: str = "gpu-1x", **extra: Any) -> dict:
    return pool(name, cls, count, **extra)


def nebius(pools: list[dict] | None = None, name: str = "prod-a", **block: Any) -> dict:
    """A Nebius cluster; with no ``block`` the nebius block is left out (it is optional)."""
    cluster: dict[str, Any] = {"source": "Nebius"}
    if block:
        cluster["nebius"] = copy.deepcopy(block)
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": {"name": name},
            "spec": {"cluster": cluster, "nodePools": pools if pools is not None else [gpu_pool()]}}


def vultr(pools: list[dict] | None = None, name: str = "prod-a", **block: Any) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": {"name": name},
            "spec": {"cluster": {"source": "Vultr", "vultr": {"region": "ewr", **copy.deepcopy(block)}},
                     "nodePools": pools if pools is not None else [gpu_pool()]}}


def nebius_config(name: str = "default", **spec: Any) -> dict:
    """A Nebius ClusterProviderConfig as examples/platform/provider-config-nebius.yaml writes it;
    ``spec`` replaces top-level fields (a value of None removes the field)."""
    body = {"projectID": "project-e00example",
            "credentials": {"source": "Secret", "secretRef": dict(KEY_SECRET)},
            "identity": {"type": "ServiceAccount"}}
    body.update(spec)
    return {"apiVersion": "nebius.m.upbound.io/v1beta1", "kind": "ClusterProviderConfig",
            "metadata": {"name": name}, "spec": {k: v for k, v in body.items() if v is not None}}


_DEFAULT = object()


def inputs(*classes: dict, config: Any = _DEFAULT) -> dict[str, list[dict]]:
    """Required resources as Crossplane passes them: the classes, no replicas, and the Nebius
    config (default: the example's; None: looked up, not found; omit with ``config=...``)."""
    out: dict[str, list[dict]] = {f"class-{c['metadata']['name']}": [c] for c in (classes or (klass(),))}
    out["modelreplicas"] = []
    if config is _DEFAULT:
        out[CLOUD_CONFIG] = [nebius_config()]
    elif config is None:
        out[CLOUD_CONFIG] = []
    elif config is not ...:
        out[CLOUD_CONFIG] = [config]
    return out
