"""Vultr: a Vultr Kubernetes Engine (VKE) cluster and one node pool per pool.

A VKE cluster is created with its default node pool (the provider's
``Kubernetes`` kind carries it as ``forProvider.nodePools``): here a CPU
system pool (``vultr.systemNodePool``) for system pods and the stack's
controllers. Each Modelplane pool becomes a ``KubernetesNodePool`` of its
class's plan, labelled with the pool and tainted ``nvidia.com/gpu`` like the
other clouds' GPU pools; VKE spells taint effects as a Node does
(``NoSchedule``).

The network: ``vultr.vpc.id`` puts the cluster in an existing VPC; otherwise
VKE creates one for it (the provider's ``vpcId``: "If not provided a new VPC
will be created instead"), so nothing is composed for the network.

The kubeconfig is the cluster's connection secret: the provider decodes VKE's
base64 ``kube_config`` into key ``kubeconfig`` (provider-upjet-vultr
config/namespaced/vke/config.go), and it authenticates by itself.
"""
from __future__ import annotations

import re
from typing import Any

from modelplane import labels
from modelplane.errors import InputError
from modelplane.platform import neocloud_names
from modelplane.platform.clouds import (
    CloudPool,
    Source,
    Target,
    connection_secret,
    kubernetes_version,
    provisioning_for,
)
from modelplane.platform.common import cluster_provider_config, meta

VKE_API = "vke.vultr.m.upbound.io/v1beta1"
# VKE names versions with their patch and VKE build (`vultr-cli kubernetes versions` lists
# them); the default is one VKE's changelog lists (docs.vultr.com/products/compute/kubernetes/changelog).
DEFAULT_VERSION = "v1.35.5+1"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def _pc(t: Target) -> dict[str, str]:
    return cluster_provider_config(t.cloud_provider_config)


def _version(t: Target) -> str:
    """The VKE version in VKE's spelling: vMAJOR.MINOR.PATCH+BUILD, as `vultr-cli kubernetes versions` lists it."""
    version = kubernetes_version(t, DEFAULT_VERSION)
    if not re.fullmatch(r"v\d+\.\d+\.\d+\+\d+", version):
        raise InputError(f"{t.block_field}.kubernetesVersion",
                         f"{version!r}: VKE takes a version as it lists them, such as {DEFAULT_VERSION} "
                         f"(`vultr-cli kubernetes versions`)")
    return version


def infra(t: Target) -> dict[str, dict]:
    system = t.block.get("systemNodePool") or {}
    fp: dict[str, Any] = {
        "region": t.block["region"],
        "version": _version(t),
        "label": neocloud_names.vultr_label(t.name),
        "nodePools": {
            "label": neocloud_names.SYSTEM_POOL,
            "plan": system.get("plan", "vc2-4c-8gb"),
            "nodeQuantity": system.get("nodeCount", 2),
            "autoScaler": False,
        },
    }
    vpc = (t.block.get("vpc") or {}).get("id")
    if vpc:
        fp["vpcId"] = vpc
    return {"cluster": {
        "apiVersion": VKE_API, "kind": "Kubernetes",
        "metadata": meta(t.key_name(), t.labels),
        "spec": {"forProvider": fp, "providerConfigRef": _pc(t),
                 "writeConnectionSecretToRef": {"name": t.kubeconfig_secret}},
    }}


def _scaling(p: CloudPool) -> dict[str, Any]:
    # VKE node pools have at least one node (terraform-provider-vultr vultr/vke.go:235-239,
    # node_quantity IntAtLeast(1)); the provider's CRD does not say so.
    if p.min_nodes is None and p.max_nodes is None:
        if p.node_count < 1:
            raise InputError(f"{p.field}.nodeCount", "a VKE node pool has at least 1 node; set nodeCount 1 or more "
                                                     "(or remove the pool)")
        return {"nodeQuantity": p.node_count, "autoScaler": False}
    low = p.node_count if p.min_nodes is None else p.min_nodes
    high = max(1, low, p.node_count if p.max_nodes is None else p.max_nodes)
    # The autoscaler owns the count between the bounds; nodeQuantity is where it starts.
    start = max(1, min(max(p.node_count, low), high))
    return {"nodeQuantity": start, "autoScaler": True, "minNodes": low, "maxNodes": high}


def pool(t: Target, p: CloudPool) -> dict:
    prov = provisioning_for(SOURCE, p)
    if p.zones:
        raise InputError(f"{p.field}.zones", "VKE node pools have no zones (vultr.region places them); "
                                             "remove zones from this pool")
    return {
        "apiVersion": VKE_API, "kind": "KubernetesNodePool",
        "metadata": meta(t.key_name(p.name), {**t.labels, labels.POOL: p.name}),
        "spec": {"forProvider": {
            "clusterIdRef": {"name": t.key_name()},
            "label": neocloud_names.vultr_label(p.name),
            "plan": prov["plan"],
            "labels": [{"key": labels.POOL, "value": p.name}],
            "taints": [dict(GPU_TAINT)],
            **_scaling(p),
        }, "providerConfigRef": _pc(t)},
    }


def check_pools(t: Target) -> None:
    neocloud_names.check_vultr(t)


SOURCE = Source(
    name="Vultr", block="vultr", provisioning="vultr",
    infra=infra, pool=pool, kubeconfig=connection_secret, cluster_key="cluster",
    check_pools=check_pools,
)
