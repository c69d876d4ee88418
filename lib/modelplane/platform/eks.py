"""EKS: IAM roles, the cluster, one managed NodeGroup per pool, ClusterAuth.

Without ``eks.subnetIds`` the VPC comes too (``eks_network``): the cluster
spans every composed subnet and node groups run in the private ones.

Upstream facts kept minimal: the cluster role trusts eks.amazonaws.com and
holds AmazonEKSClusterPolicy; the node role trusts ec2.amazonaws.com and
holds the worker, CNI and ECR read-only policies. ClusterAuth writes a
kubeconfig (key ``kubeconfig``) that the provider configs read. The cache
StorageClass is the admin's (EFS, bring your own in v0.1).
"""
from __future__ import annotations

import json
from typing import Any

from modelplane import labels
from modelplane.platform import eks_network
from modelplane.platform.clouds import (
    CloudPool,
    Source,
    Target,
    connection_secret,
    kubernetes_version,
    provisioning_for,
)
from modelplane.platform.common import cluster_provider_config, meta

EKS_API = "eks.aws.m.upbound.io/v1beta1"
IAM_API = "iam.aws.m.upbound.io/v1beta1"
POLICY = "arn:aws:iam::aws:policy/"
CLUSTER_POLICIES = ("AmazonEKSClusterPolicy",)
NODE_POLICIES = ("AmazonEC2ContainerRegistryReadOnly", "AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy")
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}


def _trust(service: str) -> str:
    doc = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}]}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def _role(t: Target, who: str, service: str, policies: tuple[str, ...]) -> dict[str, dict]:
    pc = cluster_provider_config(t.cloud_provider_config)
    role_name = t.key_name(who)
    out = {f"role-{who}": {
        "apiVersion": IAM_API, "kind": "Role",
        "metadata": meta(role_name, t.labels),
        "spec": {"forProvider": {"assumeRolePolicy": _trust(service)}, "providerConfigRef": pc},
    }}
    for policy in policies:
        key = f"rpa-{who}-{policy.lower().replace('_', '-')}"
        out[key] = {
            "apiVersion": IAM_API, "kind": "RolePolicyAttachment",
            "metadata": meta(t.key_name(who, policy.lower().replace("_", "-")), t.labels),
            "spec": {"forProvider": {"policyArn": POLICY + policy, "roleRef": {"name": role_name}},
                     "providerConfigRef": pc},
        }
    return out


def infra(t: Target) -> dict[str, dict]:
    pc = cluster_provider_config(t.cloud_provider_config)
    region = t.block["region"]
    cluster = {
        "apiVersion": EKS_API, "kind": "Cluster",
        "metadata": meta(t.key_name(), t.labels),
        "spec": {"forProvider": {
            "region": region,
            "version": kubernetes_version(t),
            "roleArnRef": {"name": t.key_name("cluster")},
            "vpcConfig": {**eks_network.cluster_subnets(t),
                          "endpointPublicAccess": True, "endpointPrivateAccess": True},
            "accessConfig": {"authenticationMode": "API_AND_CONFIG_MAP",
                             "bootstrapClusterCreatorAdminPermissions": True},
        }, "providerConfigRef": pc},
    }
    auth = {
        "apiVersion": EKS_API, "kind": "ClusterAuth",
        "metadata": meta(t.key_name("auth"), t.labels),
        "spec": {"forProvider": {"region": region, "clusterNameRef": {"name": t.key_name()}},
                 "providerConfigRef": pc,
                 "writeConnectionSecretToRef": {"name": t.kubeconfig_secret}},
    }
    return {
        "cluster": cluster, "clusterauth": auth,
        **_role(t, "cluster", "eks.amazonaws.com", CLUSTER_POLICIES),
        **_role(t, "node", "ec2.amazonaws.com", NODE_POLICIES),
        **eks_network.infra(t),
    }


def _scaling(p: CloudPool) -> dict[str, int]:
    # EKS needs maxSize >= 1 and minSize <= desiredSize <= maxSize.
    low = p.node_count if p.min_nodes is None else p.min_nodes
    high = max(1, low, p.node_count if p.max_nodes is None else p.max_nodes)
    return {"minSize": low, "maxSize": high, "desiredSize": min(max(p.node_count, low), high)}


def pool(t: Target, p: CloudPool) -> dict:
    prov = provisioning_for(SOURCE, p)
    fp: dict[str, Any] = {
        "region": t.block["region"],
        "clusterNameRef": {"name": t.key_name()},
        "nodeRoleArnRef": {"name": t.key_name("node")},
        **eks_network.pool_subnets(t, p.zones),
        "instanceTypes": [prov["instanceType"]],
        "amiType": prov.get("amiType", "AL2023_x86_64_NVIDIA"),
        "diskSize": prov.get("diskSizeGb", 200),
        "capacityType": prov.get("capacityType", "ON_DEMAND"),
        "scalingConfig": _scaling(p),
        "labels": {labels.POOL: p.name},
        "taint": [dict(GPU_TAINT)],
    }
    return {
        "apiVersion": EKS_API, "kind": "NodeGroup",
        "metadata": meta(t.key_name(p.name), {**t.labels, labels.POOL: p.name}),
        "spec": {"forProvider": fp, "providerConfigRef": cluster_provider_config(t.cloud_provider_config)},
    }


SOURCE = Source(
    name="EKS", block="eks", provisioning="eks",
    infra=infra, pool=pool, kubeconfig=connection_secret, cluster_key="cluster",
    deletion_order=eks_network.deletion_order,
)
