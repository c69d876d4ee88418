"""The network a GKE cluster runs in: the user's, or one Modelplane composes.

With ``gke.network`` the cluster joins that network (and ``gke.subnetwork``
when given) as a VPC-native cluster whose secondary ranges GKE picks; its
nodes keep public addresses, since Modelplane cannot know whether the
network has a NAT.

Without it Modelplane composes a custom-mode VPC network, one regional
subnetwork with secondary ranges for pods and services (VPC-native), and a
Cloud Router with Cloud NAT, so the nodes run with private addresses only
and still pull images. The ranges are fixed (GKE's own defaults' sizes):
nodes 10.0.0.0/20, pods 10.4.0.0/14, services 10.8.0.0/20.
"""
from __future__ import annotations

from typing import Any

from modelplane.platform.clouds import NETWORK_PREFIX, Target
from modelplane.platform.common import cluster_provider_config, meta

COMPUTE_API = "compute.gcp.m.upbound.io/v1beta1"
NODES_RANGE = "10.0.0.0/20"
PODS = ("pods", "10.4.0.0/14")
SERVICES = ("services", "10.8.0.0/20")


def composes(t: Target) -> bool:
    return not t.block.get("network")


def network_name(t: Target) -> str:
    """The VPC network's name (a self link's last segment), as Filestore wants it."""
    if composes(t):
        return t.key_name("vpc")
    return str(t.block["network"]).rstrip("/").rsplit("/", 1)[-1]


def _resource(t: Target, kind: str, name: str, fp: dict[str, Any]) -> dict[str, Any]:
    if t.block.get("project"):
        fp["project"] = t.block["project"]
    return {
        "apiVersion": COMPUTE_API, "kind": kind,
        "metadata": meta(name, t.labels),
        "spec": {"forProvider": fp, "providerConfigRef": cluster_provider_config(t.cloud_provider_config)},
    }


def infra(t: Target) -> dict[str, dict]:
    """composition-resource-name -> network resource ({} for an existing network)."""
    if not composes(t):
        return {}
    region = t.block["region"]
    net_ref = {"name": t.key_name("vpc")}
    return {
        f"{NETWORK_PREFIX}network": _resource(t, "Network", t.key_name("vpc"), {
            "autoCreateSubnetworks": False, "routingMode": "REGIONAL"}),
        f"{NETWORK_PREFIX}subnetwork": _resource(t, "Subnetwork", t.key_name("nodes"), {
            "region": region, "networkRef": net_ref, "ipCidrRange": NODES_RANGE,
            # Private nodes reach Google APIs (Artifact Registry, GCS) without NAT.
            "privateIpGoogleAccess": True,
            "secondaryIpRange": [{"rangeName": n, "ipCidrRange": r} for n, r in (PODS, SERVICES)]}),
        f"{NETWORK_PREFIX}router": _resource(t, "Router", t.key_name("router"), {
            "region": region, "networkRef": net_ref}),
        f"{NETWORK_PREFIX}routernat": _resource(t, "RouterNAT", t.key_name("nat"), {
            "region": region, "routerRef": {"name": t.key_name("router")},
            "natIpAllocateOption": "AUTO_ONLY",
            "sourceSubnetworkIpRangesToNat": "ALL_SUBNETWORKS_ALL_IP_RANGES"}),
    }


def cluster_fields(t: Target) -> dict[str, Any]:
    """The GKE Cluster's network fields: VPC-native always, private nodes on the composed network."""
    if not composes(t):
        fields: dict[str, Any] = {"network": t.block["network"], "networkingMode": "VPC_NATIVE",
                                  "ipAllocationPolicy": {"stackType": "IPV4"}}
        if t.block.get("subnetwork"):
            fields["subnetwork"] = t.block["subnetwork"]
        return fields
    return {
        "networkRef": {"name": t.key_name("vpc")},
        "subnetworkRef": {"name": t.key_name("nodes")},
        "networkingMode": "VPC_NATIVE",
        "ipAllocationPolicy": {"clusterSecondaryRangeName": PODS[0], "servicesSecondaryRangeName": SERVICES[0]},
        # The control plane keeps its public endpoint: Crossplane reaches it from outside the VPC.
        "privateClusterConfig": {"enablePrivateNodes": True, "enablePrivateEndpoint": False},
    }
