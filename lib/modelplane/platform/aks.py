"""AKS: resource group, virtual network, the cluster, one node pool per pool.

The cluster runs Azure CNI Overlay (pods take overlay addresses, so the node
subnet stays small) with a system-assigned identity, a CPU system pool
(``aks.systemNodePool``: AKS cannot run without one; the stack's controllers
run there) and the Azure Files CSI driver. Each Modelplane pool becomes a
User-mode ``KubernetesClusterNodePool`` whose AKS name comes from
``aks_names``; GPU nodes get AKS's NVIDIA driver unless the class says
``gpuDriver: None``, and the ``nvidia.com/gpu`` taint like the other clouds.

The network: ``aks.network.subnetId`` names an existing subnet; otherwise a
virtual network (``aks.network.cidr``, default 10.224.0.0/16) with one node
subnet (its first half) is composed in the resource group
(``aks.resourceGroupName``, or one composed as ``<cluster>-rg``). A cluster
identity in a network it did not create needs "Network Contributor" on the
subnet to program load balancers and join nodes; that role assignment is
composed as soon as the cluster reports its identity's principal ID, and is
deleted only after the cluster and every node pool (``deletion_order``).

The model cache uses the ``modelplane-rwx`` Azure Files class (NFS on
premium file shares; the subnet carries the Microsoft.Storage service
endpoint the shares' network rules need). The kubeconfig is the cluster's
connection secret (key ``kubeconfig``).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane import labels
from modelplane.errors import InputError
from modelplane.naming import dns_label
from modelplane.objects import remote_object
from modelplane.platform import aks_names
from modelplane.platform.clouds import (
    NETWORK_PREFIX,
    CloudPool,
    Source,
    Target,
    connection_secret,
    kubernetes_version,
    provisioning_for,
)
from modelplane.platform.common import (
    NAMESPACE,
    cluster_provider_config,
    meta,
    network_cidr,
    rwx_storage_class,
)

AZURE_API = "azure.m.upbound.io/v1beta1"
NETWORK_API = "network.azure.m.upbound.io/v1beta1"
CONTAINER_API = "containerservice.azure.m.upbound.io/v1beta1"
AUTHORIZATION_API = "authorization.azure.m.upbound.io/v1beta1"
EXTERNAL_NAME = "crossplane.io/external-name"
DEFAULT_CIDR = "10.224.0.0/16"
MIN_PREFIX, MAX_PREFIX = 8, 24
GPU_TAINT = "nvidia.com/gpu=present:NoSchedule"
# AKS installs its NVIDIA driver (modelplane.platform.gpu_drivers pairs it with the DRA driver).
DEFAULT_GPU_DRIVER = "Install"
ZONES = ("1", "2", "3")
NETWORK_CONTRIBUTOR = "Network Contributor"
# AKS dnsPrefix: 1-54 letters, digits and hyphens.
DNS_PREFIX_MAX = 54

RG_KEY = NETWORK_PREFIX + "resourcegroup"
VNET_KEY = NETWORK_PREFIX + "virtualnetwork"
SUBNET_KEY = NETWORK_PREFIX + "subnet"
ROLE_KEY = "roleassignment-network"


def _pc(t: Target) -> dict[str, str]:
    return cluster_provider_config(t.cloud_provider_config)


def _resource_group(t: Target) -> dict[str, Any]:
    """The resource group field of every resource: the user's name or a ref to the composed one."""
    if t.block.get("resourceGroupName"):
        return {"resourceGroupName": t.block["resourceGroupName"]}
    return {"resourceGroupNameRef": {"name": t.key_name("rg")}}


def _subnet(t: Target) -> dict[str, Any]:
    """A node pool's subnet field: the user's subnet ID or a ref to the composed subnet."""
    subnet_id = (t.block.get("network") or {}).get("subnetId")
    return {"vnetSubnetId": subnet_id} if subnet_id else {"vnetSubnetIdRef": {"name": t.key_name("nodes")}}


def _node_range(t: Target) -> tuple[str, str]:
    """(virtual network range, node subnet range = its first half)."""
    net = network_cidr(t.block, t.block_field, DEFAULT_CIDR, (MIN_PREFIX, MAX_PREFIX),
                       ": the node subnet is its first half")
    return str(net), str(next(net.subnets()))


def _network(t: Target) -> dict[str, dict]:
    out: dict[str, dict] = {}
    if not t.block.get("resourceGroupName"):
        out[RG_KEY] = {
            "apiVersion": AZURE_API, "kind": "ResourceGroup",
            "metadata": meta(t.key_name("rg"), t.labels),
            "spec": {"forProvider": {"location": t.block["location"]}, "providerConfigRef": _pc(t)},
        }
    if (t.block.get("network") or {}).get("subnetId"):
        return out
    vnet, nodes = _node_range(t)
    out[VNET_KEY] = {
        "apiVersion": NETWORK_API, "kind": "VirtualNetwork",
        "metadata": meta(t.key_name("vnet"), t.labels),
        "spec": {"forProvider": {"location": t.block["location"], "addressSpace": [vnet], **_resource_group(t)},
                 "providerConfigRef": _pc(t)},
    }
    out[SUBNET_KEY] = {
        "apiVersion": NETWORK_API, "kind": "Subnet",
        "metadata": meta(t.key_name("nodes"), t.labels),
        "spec": {"forProvider": {
            "addressPrefixes": [nodes],
            "virtualNetworkNameRef": {"name": t.key_name("vnet")},
            # Azure Files NFS shares admit the nodes through this service endpoint.
            "serviceEndpoints": ["Microsoft.Storage"],
            **_resource_group(t),
        }, "providerConfigRef": _pc(t)},
    }
    return out


def infra(t: Target) -> dict[str, dict]:
    system = t.block.get("systemNodePool") or {}
    fp: dict[str, Any] = {
        "location": t.block["location"],
        **_resource_group(t),
        "dnsPrefix": dns_label(t.name, max_length=DNS_PREFIX_MAX),
        "kubernetesVersion": kubernetes_version(t),
        "defaultNodePool": {
            "name": aks_names.SYSTEM_POOL,
            "vmSize": system.get("vmSize", "Standard_D4s_v5"),
            "nodeCount": system.get("nodeCount", 2),
            **_subnet(t),
        },
        "identity": {"type": "SystemAssigned"},
        "networkProfile": {"networkPlugin": "azure", "networkPluginMode": "overlay",
                           "loadBalancerSku": "standard", "outboundType": "loadBalancer"},
        "roleBasedAccessControlEnabled": True,
        "oidcIssuerEnabled": True,
        "workloadIdentityEnabled": True,
        "storageProfile": {"fileDriverEnabled": True},
    }
    cluster = {
        "apiVersion": CONTAINER_API, "kind": "KubernetesCluster",
        "metadata": meta(t.key_name(), t.labels),
        "spec": {"forProvider": fp, "providerConfigRef": _pc(t),
                 "writeConnectionSecretToRef": {"name": t.kubeconfig_secret}},
    }
    return {"cluster": cluster, **_network(t)}


def role_assignment(t: Target, observed: Mapping[str, Mapping[str, Any]]) -> dict[str, dict]:
    """Network Contributor on the node subnet for the cluster identity, once both IDs are known."""
    at = lambda key: ((observed.get(key) or {}).get("status") or {}).get("atProvider") or {}
    principal = (at("cluster").get("identity") or {}).get("principalId")
    scope = (t.block.get("network") or {}).get("subnetId") or at(SUBNET_KEY).get("id")
    if not principal or not scope:
        return {}
    return {ROLE_KEY: {
        "apiVersion": AUTHORIZATION_API, "kind": "RoleAssignment",
        "metadata": meta(t.key_name("network-contributor"), t.labels),
        "spec": {"forProvider": {"principalId": principal, "principalType": "ServicePrincipal",
                                 "roleDefinitionName": NETWORK_CONTRIBUTOR, "scope": scope},
                 "providerConfigRef": _pc(t)},
    }}


def _scaling(p: CloudPool) -> dict[str, Any]:
    if p.min_nodes is None and p.max_nodes is None:
        return {"nodeCount": p.node_count}
    # AKS needs maxCount >= 1 and minCount <= maxCount; the autoscaler owns the count.
    low = p.node_count if p.min_nodes is None else p.min_nodes
    high = max(1, low, p.node_count if p.max_nodes is None else p.max_nodes)
    return {"autoScalingEnabled": True, "minCount": low, "maxCount": high}


def pool(t: Target, p: CloudPool) -> dict:
    prov = provisioning_for(SOURCE, p)
    for j, zone in enumerate(p.zones):
        if zone not in ZONES:
            raise InputError(f"{p.field}.zones[{j}]",
                             f"{zone!r} is not an AKS availability zone; write 1, 2 or 3 (or omit zones)")
    acc = prov.get("accelerator") or {}
    fp: dict[str, Any] = {
        "kubernetesClusterIdRef": {"name": t.key_name()},
        "mode": "User",
        "vmSize": prov["vmSize"],
        "osDiskSizeGb": prov.get("osDiskSizeGb", 200),
        "osSku": prov.get("osSku", "Ubuntu"),
        "gpuDriver": acc.get("gpuDriver", DEFAULT_GPU_DRIVER),
        "nodeLabels": {labels.POOL: p.name},
        "nodeTaints": [GPU_TAINT],
        **_subnet(t),
        **_scaling(p),
    }
    if prov.get("osDiskType"):
        fp["osDiskType"] = prov["osDiskType"]
    if acc.get("gpuInstance"):
        fp["gpuInstance"] = acc["gpuInstance"]
    if p.zones:
        fp["zones"] = list(p.zones)
    md = meta(t.key_name(p.name), {**t.labels, labels.POOL: p.name})
    # The AKS pool name is the external name; metadata.name stays unique across clusters.
    md["annotations"] = {EXTERNAL_NAME: aks_names.pool_name(p.name)}
    return {
        "apiVersion": CONTAINER_API, "kind": "KubernetesClusterNodePool",
        "metadata": md,
        "spec": {"forProvider": fp, "providerConfigRef": _pc(t)},
    }


def check_pools(t: Target) -> None:
    aks_names.check_unique((f"spec.nodePools[{i}]", p["name"]) for i, p in enumerate(t.node_pools))


def storage_class(t: Target, provider_config: str) -> dict[str, dict]:
    """The ``modelplane-rwx`` Azure Files class: NFS 4.1 shares on premium storage."""
    manifest = rwx_storage_class("file.csi.azure.com", {"skuName": "Premium_LRS", "protocol": "nfs"},
                                 ("nconnect=4", "noresvport", "actimeo=30"))
    return {"storageclass": remote_object(t.key_name("storageclass"), manifest, provider_config,
                                          namespace=NAMESPACE, labels=t.labels)}


def deletion_order(t: Target) -> list[tuple[str, str]]:
    """The role assignment names the subnet by ID (no ref), so say it outright; and it
    outlives whoever acts with it: the cluster (its identity programs load balancers in
    the subnet) and every node pool (its nodes join the subnet under that identity).

    AKS documents Network Contributor on a subnet it did not create as what the cluster
    identity needs (``subnets/join/action``, ``subnets/read``: learn.microsoft.com,
    "Use a managed identity in AKS" and "AKS service permissions"), so it must last
    while anything acting under that identity may still touch the subnet.
    Nothing refers to the assignment (its principal and scope are IDs), so every order
    is said here; it exists only once the cluster reports its identity (``late``).
    """
    users = ["cluster", *(SOURCE.pool_key(p["name"]) for p in t.node_pools)]
    return [(ROLE_KEY, SUBNET_KEY), *((user, ROLE_KEY) for user in users)]


SOURCE = Source(
    name="AKS", block="aks", provisioning="aks",
    infra=infra, pool=pool, kubeconfig=connection_secret, cluster_key="cluster",
    extra=storage_class, late=role_assignment, deletion_order=deletion_order, check_pools=check_pools,
)
