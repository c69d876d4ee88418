"""GKE: a regional cluster, one NodePool per pool, Filestore for the cache.

The network is the user's (``gke.network``) or composed (``gke_network``).

The Cluster runs a DRA-capable version (1.34 or later, as Google's DRA
guide requires) with workload identity and the Filestore CSI driver; its
default node pool is removed so every node belongs to a Modelplane pool (and
carries ``modelplane.ai/pool``). GPU pools follow that guide (``gke_dra``):
GKE's driver installation and device plugin off, the driver installed by a
DaemonSet Modelplane composes, NVIDIA's DRA driver publishing the GPUs.
"""
from __future__ import annotations

from typing import Any

from modelplane import labels
from modelplane.objects import remote_object
from modelplane.platform import gke_dra, gke_network
from modelplane.platform.clouds import (
    CloudPool,
    Source,
    Target,
    connection_secret,
    kubernetes_version,
    provisioning_for,
)
from modelplane.platform.common import (
    NAMESPACE,
    RWX_STORAGE_CLASS,
    cluster_provider_config,
    meta,
    rwx_storage_class,
)

CONTAINER_API = "container.gcp.m.upbound.io/v1beta1"
SERVICE_API = "cloudplatform.gcp.m.upbound.io/v1beta1"
STORAGE_CLASS = RWX_STORAGE_CLASS
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}


def _project(t: Target, for_provider: dict[str, Any]) -> dict[str, Any]:
    if t.block.get("project"):
        for_provider["project"] = t.block["project"]
    return for_provider


def infra(t: Target) -> dict[str, dict]:
    fp: dict[str, Any] = {
        "location": t.block["region"],
        "minMasterVersion": kubernetes_version(t),
        "releaseChannel": {"channel": "REGULAR"},
        "deletionProtection": False,
        # The API needs a default pool to create a cluster; it is removed at once.
        "removeDefaultNodePool": True,
        "initialNodeCount": 1,
        "addonsConfig": {"gcpFilestoreCsiDriverConfig": {"enabled": True}},
        **gke_network.cluster_fields(t),
    }
    if t.block.get("project"):
        fp["workloadIdentityConfig"] = {"workloadPool": f"{t.block['project']}.svc.id.goog"}
    _project(t, fp)
    pc = cluster_provider_config(t.cloud_provider_config)
    cluster = {
        "apiVersion": CONTAINER_API, "kind": "Cluster",
        "metadata": meta(t.key_name(), t.labels),
        "spec": {"forProvider": fp, "providerConfigRef": pc,
                 "writeConnectionSecretToRef": {"name": t.kubeconfig_secret}},
    }
    # Filestore needs its API on; leave it on when the cluster goes (others may use it).
    service = {
        "apiVersion": SERVICE_API, "kind": "ProjectService",
        "metadata": meta(t.key_name("file-googleapis-com"), t.labels),
        "spec": {"forProvider": _project(t, {"service": "file.googleapis.com", "disableOnDestroy": False}),
                 "providerConfigRef": pc},
    }
    return {"cluster": cluster, "service-filestore": service, **gke_network.infra(t)}


def _scaling(pool: CloudPool) -> dict[str, Any]:
    """GKE counts nodes per zone; Modelplane counts them per pool.

    A fixed pool whose zones divide its count gets a per-zone nodeCount.
    Otherwise (autoscaling, or zones left to GKE) the pool's total bounds
    are what the user asked for, which GKE's total limits express exactly.
    """
    autoscale = pool.min_nodes is not None or pool.max_nodes is not None
    if not autoscale and pool.zones and pool.node_count % len(pool.zones) == 0:
        return {"nodeCount": pool.node_count // len(pool.zones)}
    low = pool.node_count if pool.min_nodes is None else pool.min_nodes
    high = pool.node_count if pool.max_nodes is None else pool.max_nodes
    return {"autoscaling": {"totalMinNodeCount": low, "totalMaxNodeCount": max(low, high), "locationPolicy": "ANY"}}


def pool(t: Target, p: CloudPool) -> dict:
    prov = provisioning_for(SOURCE, p)
    node: dict[str, Any] = {
        "machineType": prov["machineType"],
        "diskSizeGb": prov.get("diskSizeGb", 200),
        "spot": bool(prov.get("spot", False)),
        "labels": {labels.POOL: p.name},
        "oauthScopes": ["https://www.googleapis.com/auth/cloud-platform"],
    }
    if t.block.get("project"):
        node["workloadMetadataConfig"] = {"mode": "GKE_METADATA"}
    for key in ("diskType", "imageType"):
        if prov.get(key):
            node[key] = prov[key]
    acc = prov.get("accelerator")
    if acc:
        node["guestAccelerator"], dra_labels = gke_dra.accelerator(p, prov)
        node["labels"].update(dra_labels)
        # GKE adds this taint to GPU nodes itself; declaring it keeps the spec and the node in step.
        node["taint"] = [dict(GPU_TAINT)]
    fp: dict[str, Any] = {
        "clusterRef": {"name": t.key_name()},
        "location": t.block["region"],
        "management": {"autoRepair": True, "autoUpgrade": True},
        "nodeConfig": node,
        **_scaling(p),
    }
    if p.zones:
        fp["nodeLocations"] = list(p.zones)
    _project(t, fp)
    return {
        "apiVersion": CONTAINER_API, "kind": "NodePool",
        "metadata": meta(t.key_name(p.name), {**t.labels, labels.POOL: p.name}),
        "spec": {"forProvider": fp, "providerConfigRef": cluster_provider_config(t.cloud_provider_config)},
    }


def extra(t: Target, provider_config: str) -> dict[str, dict]:
    """The ``modelplane-rwx`` Filestore class ModelCache PVCs use by default, and the
    NVIDIA driver installer of DRA GPU pools (no pods where there are none)."""
    manifest = rwx_storage_class("filestore.csi.storage.gke.io",
                                 {"tier": "enterprise", "network": gke_network.network_name(t)})
    obj = remote_object(t.key_name("storageclass"), manifest, provider_config,
                        namespace=NAMESPACE, labels=t.labels)
    return {"storageclass": obj,
            **gke_dra.installer(t.key_name("gpu-driver-installer"), provider_config, t.labels)}


SOURCE = Source(
    name="GKE", block="gke", provisioning="gke",
    infra=infra, pool=pool, kubeconfig=connection_secret, cluster_key="cluster",
    extra=extra,
    stack_values=gke_dra.STACK_VALUES,
    stack_extras=(gke_dra.INSTALLER_KEY,),
    pool_warning=gke_dra.legacy_warning,
)
