"""Nebius: a managed Kubernetes (mk8s) cluster, its network, a system node group and one node group per pool.

Every Nebius resource lives under a parent, here the project: the provider
defaults ``parentId`` from its ProviderConfig's ``spec.projectID``
(provider-upjet-nebius v1.0.1, config/common/parentid.go), and a project is
bound to one region, so nothing composed names a region or a project.

The network: ``nebius.network.subnetId`` names an existing subnet; otherwise a
network and a subnet that takes its addresses from the network's default
pools (``useNetworkPools``) are composed. The control plane has a public
endpoint (the control plane that runs Crossplane must reach it) and three etcd
members. A CPU system node group (``nebius.systemNodeGroup``) runs system pods
and the stack's controllers; each Modelplane pool becomes a ``NodeGroup`` of
its class's platform and preset, tainted ``nvidia.com/gpu`` like the other
clouds' GPU pools, its nodes labelled with the pool.

The kubeconfig the cluster publishes (connection key ``kubeconfig``,
config/common/kubeconfig.go:18-23) holds the endpoint and the CA only: Nebius
clients authenticate through Nebius IAM. So the kubernetes and helm provider
configs carry an identity of type ``NebiusServiceAccountCredentials`` reading
the service-account key of the Nebius ClusterProviderConfig that provisions
the cluster (``provider_identity``): both read the same JSON (``account_id``,
``public_key_id``, ``private_key``: provider-upjet-nebius
internal/clients/nebius.go:121-129, provider-kubernetes
pkg/kube/client/nebius/nebius.go:17-22).

No StorageClass is composed: a ReadWriteMany class over Nebius storage is the
platform team's (``nebius.cache.storageClassName``, default ``modelplane-rwx``).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from modelplane import labels
from modelplane.errors import InputError
from modelplane.platform import gpu_drivers, neocloud_names, stack
from modelplane.platform.clouds import (
    NETWORK_PREFIX,
    CloudPool,
    Identity,
    Source,
    Target,
    connection_secret,
    kubernetes_version,
    provisioning_for,
)
from modelplane.platform.common import RWX_STORAGE_CLASS, cluster_provider_config, meta

MK8S_API = "mk8s.nebius.m.upbound.io/v1beta1"
VPC_API = "vpc.nebius.m.upbound.io/v1beta1"
CONFIG_API, CONFIG_KIND = "nebius.m.upbound.io/v1beta1", "ClusterProviderConfig"
# The Nebius API spells taint effects in upper case (like GKE's).
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
BOOT_DISK_TYPE = "NETWORK_SSD"
ETCD_MEMBERS = 3
IDENTITY_TYPE = "NebiusServiceAccountCredentials"

NETWORK_KEY = NETWORK_PREFIX + "network"
SUBNET_KEY = NETWORK_PREFIX + "subnet"
SYSTEM_KEY = "nodegroup-system"

# GPU platforms and the presets each offers, for a clear error on a typo (Nebius
# offers one- and eight-GPU presets: nebius/nebius-solutions-library
# soperator/modules/available_resources/cpu_topology.tf). A platform not listed
# here is passed to Nebius as written (new platforms appear).
PRESETS: Mapping[str, tuple[str, ...]] = {
    "gpu-h100-sxm": ("1gpu-16vcpu-200gb", "8gpu-128vcpu-1600gb"),
    "gpu-h200-sxm": ("1gpu-16vcpu-200gb", "8gpu-128vcpu-1600gb"),
    "gpu-b200-sxm": ("1gpu-20vcpu-224gb", "8gpu-160vcpu-1792gb"),
    "gpu-b200-sxm-a": ("1gpu-20vcpu-224gb", "8gpu-160vcpu-1792gb"),
}
# Platforms that accept only some driver presets (nebius/api mk8s/v1/node_group.proto,
# GpuSettings.drivers_preset: gpu-b200-sxm-a takes cuda12.8 only).
DRIVERS: Mapping[str, tuple[str, ...]] = {"gpu-b200-sxm-a": ("cuda12.8",)}


def _pc(t: Target) -> dict[str, str]:
    return cluster_provider_config(t.cloud_provider_config)


def _subnet_ref(t: Target) -> dict[str, Any]:
    subnet_id = (t.block.get("network") or {}).get("subnetId")
    return {"subnetId": subnet_id} if subnet_id else {"subnetIdRef": {"name": t.key_name("subnet")}}


def _network(t: Target) -> dict[str, dict]:
    if (t.block.get("network") or {}).get("subnetId"):
        return {}
    return {
        NETWORK_KEY: {
            "apiVersion": VPC_API, "kind": "Network",
            "metadata": meta(t.key_name("network"), t.labels),
            "spec": {"forProvider": {"name": neocloud_names.nebius_name(t.name, "network")},
                     "providerConfigRef": _pc(t)},
        },
        SUBNET_KEY: {
            "apiVersion": VPC_API, "kind": "Subnet",
            "metadata": meta(t.key_name("subnet"), t.labels),
            "spec": {"forProvider": {
                "name": neocloud_names.nebius_name(t.name, "subnet"),
                "networkIdRef": {"name": t.key_name("network")},
                "ipv4PrivatePools": {"useNetworkPools": True},
            }, "providerConfigRef": _pc(t)},
        },
    }


def _system_node_group(t: Target, version: str) -> dict[str, Any]:
    system = t.block.get("systemNodeGroup") or {}
    return {
        "apiVersion": MK8S_API, "kind": "NodeGroup",
        "metadata": meta(t.key_name("system"), t.labels),
        "spec": {"forProvider": {
            "name": neocloud_names.node_group_name(neocloud_names.SYSTEM_POOL),
            "parentIdRef": {"name": t.key_name()},
            "version": version,
            "fixedNodeCount": system.get("nodeCount", 2),
            "template": {
                "resources": {"platform": system.get("platform", "cpu-d3"),
                              "preset": system.get("preset", "4vcpu-16gb")},
                "bootDisk": {"sizeGibibytes": 128, "type": BOOT_DISK_TYPE},
                "networkInterfaces": [_subnet_ref(t)],
            },
        }, "providerConfigRef": _pc(t)},
    }


def _version(t: Target) -> str:
    """The mk8s version: MAJOR.MINOR only (nebius/api mk8s/v1/cluster.proto:49-55 takes no patch)."""
    version = kubernetes_version(t)
    if not re.fullmatch(r"\d+\.\d+", version):
        raise InputError(f"{t.block_field}.kubernetesVersion",
                         f"{version!r}: mk8s takes MAJOR.MINOR such as 1.34 (no 'v', no patch)")
    return version


def infra(t: Target) -> dict[str, dict]:
    version = _version(t)
    cluster = {
        "apiVersion": MK8S_API, "kind": "Cluster",
        "metadata": meta(t.key_name(), t.labels),
        "spec": {"forProvider": {
            "name": neocloud_names.nebius_name(t.name),
            "controlPlane": {
                "version": version,
                **_subnet_ref(t),
                # Public: the control plane running Crossplane reaches the API server from outside the VPC.
                "endpoints": {"publicEndpoint": {}},
                "etcdClusterSize": ETCD_MEMBERS,
            },
        }, "providerConfigRef": _pc(t), "writeConnectionSecretToRef": {"name": t.kubeconfig_secret}},
    }
    return {"cluster": cluster, SYSTEM_KEY: _system_node_group(t, version), **_network(t)}


def _scaling(p: CloudPool) -> dict[str, Any]:
    if p.min_nodes is None and p.max_nodes is None:
        return {"fixedNodeCount": p.node_count}
    low = p.node_count if p.min_nodes is None else p.min_nodes
    high = max(low, p.node_count if p.max_nodes is None else p.max_nodes)
    return {"autoscaling": {"minNodeCount": low, "maxNodeCount": high}}


def check_preset(prov: Mapping[str, Any], field: str) -> None:
    """A known GPU platform's preset (and driver preset) must be one it offers: caught here,
    with the choices, rather than refused by Nebius once the node group is created."""
    platform, preset, drivers = prov.get("platform", ""), prov.get("preset", ""), prov.get("driversPreset")
    offered = PRESETS.get(platform)
    if offered is not None and preset not in offered:
        raise InputError(f"{field}.preset", f"{preset!r} is not a preset of the Nebius platform {platform}; "
                                            f"use one of {', '.join(offered)}")
    allowed = DRIVERS.get(platform)
    if drivers and allowed is not None and drivers not in allowed:
        raise InputError(f"{field}.driversPreset", f"the Nebius platform {platform} takes driversPreset "
                                                   f"{' or '.join(allowed)}, not {drivers!r}")


def check_drivers(prov: Mapping[str, Any], field: str) -> None:
    """A new node group's driver preset must carry a driver the stack's DRA driver starts on
    (modelplane.platform.gpu_drivers). A node group already running keeps its preset: changing
    it would roll its nodes, and the running engines with them."""
    drivers = prov.get("driversPreset")
    dra = next(c for c in stack.COMPONENTS if c.key == "draDriver")
    need = gpu_drivers.release_for(dra.version).min_driver
    branch = gpu_drivers.nebius_min_branch(prov.get("platform", ""), drivers or "")
    if branch is not None and branch < need:
        ok = gpu_drivers.nebius_presets_starting(prov.get("platform", ""), need)
        raise InputError(f"{field}.driversPreset",
                         f"{drivers!r} may install NVIDIA driver {branch} on {prov.get('platform')}, and NVIDIA's "
                         f"DRA driver (chart {dra.version}) starts on {need} or later, so the pool would publish "
                         f"no GPUs; set driversPreset to {' or '.join(ok)} (docs/platform/gpu-classes.md, the GPU "
                         f"driver and the DRA driver)")


def pool(t: Target, p: CloudPool) -> dict:
    prov = provisioning_for(SOURCE, p)
    if p.zones:
        raise InputError(f"{p.field}.zones", "Nebius node groups have no zones (a project's region places them); "
                                             "remove zones from this pool")
    check_preset(prov, f"InferenceClass {p.class_name}: spec.provisioning.nebius")
    if p.observed is None:
        check_drivers(prov, f"InferenceClass {p.class_name}: spec.provisioning.nebius")
    template: dict[str, Any] = {
        "resources": {"platform": prov["platform"], "preset": prov["preset"]},
        "bootDisk": {"sizeGibibytes": prov.get("bootDiskSizeGib", 200), "type": BOOT_DISK_TYPE},
        "networkInterfaces": [_subnet_ref(t)],
        "metadata": {"labels": {labels.POOL: p.name}},
        "taints": [dict(GPU_TAINT)],
    }
    if prov.get("driversPreset"):
        template["gpuSettings"] = {"driversPreset": prov["driversPreset"]}
    return {
        "apiVersion": MK8S_API, "kind": "NodeGroup",
        "metadata": meta(t.key_name(p.name), {**t.labels, labels.POOL: p.name}),
        "spec": {"forProvider": {
            "name": neocloud_names.node_group_name(p.name),
            "parentIdRef": {"name": t.key_name()},
            "version": _version(t),
            "template": template,
            **_scaling(p),
        }, "providerConfigRef": _pc(t)},
    }


def provider_identity(t: Target, config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``spec.identity`` of the kubernetes and helm provider configs: the service-account key
    the Nebius ClusterProviderConfig ``config`` provisions with, or an InputError saying what to fix."""
    where = f"Nebius {CONFIG_KIND} {t.cloud_provider_config!r}"
    spec = config.get("spec") or {}
    creds = spec.get("credentials") or {}
    ref = creds.get("secretRef") or {}
    if creds.get("source") != "Secret" or not all(ref.get(k) for k in ("namespace", "name", "key")):
        raise InputError(f"{t.block_field}.credentials.providerConfigName",
                         f"{where} must read its credentials from a Secret (spec.credentials.source: Secret with "
                         f"secretRef namespace, name and key): the kubernetes and helm provider configs "
                         f"authenticate to the cluster with that same service-account key")
    kind = (spec.get("identity") or {}).get("type")
    if kind != "ServiceAccount":
        raise InputError(f"{t.block_field}.credentials.providerConfigName",
                         f"{where} has spec.identity.type {kind or 'unset'}; set ServiceAccount (a service-account "
                         f"key: account_id, public_key_id, private_key): provider-kubernetes and provider-helm "
                         f"authenticate to mk8s clusters only with such a key")
    if not spec.get("projectID"):
        raise InputError(f"{t.block_field}.credentials.providerConfigName",
                         f"{where} has no spec.projectID; set it: the cluster, its node groups and network are "
                         f"created in that project (Modelplane sets no parentId)")
    return {"type": IDENTITY_TYPE, "source": "Secret",
            "secretRef": {"namespace": ref["namespace"], "name": ref["name"], "key": ref["key"]}}


def check_pools(t: Target) -> None:
    neocloud_names.check_nebius(t)


SOURCE = Source(
    name="Nebius", block="nebius", provisioning="nebius",
    infra=infra, pool=pool, kubeconfig=connection_secret, cluster_key="cluster",
    held=(SYSTEM_KEY,), check_pools=check_pools,
    # The XRD's defaults of the nebius block (apis/inferenceclusters/definition.yaml).
    default_block={"systemNodeGroup": {}, "credentials": {"providerConfigName": "default"},
                   "cache": {"storageClassName": RWX_STORAGE_CLASS}},
    identity=Identity(CONFIG_API, CONFIG_KIND, provider_identity),
)
