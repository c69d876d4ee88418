"""EKS: IAM roles, the cluster, one managed NodeGroup per pool, ClusterAuth.

Without ``eks.subnetIds`` the VPC comes too (``eks_network``): the cluster
spans every composed subnet and node groups run in the private ones.

Upstream facts kept minimal: the cluster role trusts eks.amazonaws.com and
holds AmazonEKSClusterPolicy; the node role trusts ec2.amazonaws.com and
holds the worker, CNI and ECR read-only policies. Each role and its policy
attachments outlive whoever runs as the role (``deletion_order``). ClusterAuth
writes a kubeconfig (key ``kubeconfig``) that the provider configs read. The
cache StorageClass is the admin's (EFS, bring your own in v0.1).
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
# Its NVIDIA driver pairs with the stack's DRA driver (modelplane.platform.gpu_drivers).
DEFAULT_AMI_TYPE = "AL2023_x86_64_NVIDIA"


def _trust(service: str) -> str:
    doc = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}]}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def _attachment_key(who: str, policy: str) -> str:
    return f"rpa-{who}-{policy.lower().replace('_', '-')}"


def _role(t: Target, who: str, service: str, policies: tuple[str, ...]) -> dict[str, dict]:
    pc = cluster_provider_config(t.cloud_provider_config)
    role_name = t.key_name(who)
    out = {f"role-{who}": {
        "apiVersion": IAM_API, "kind": "Role",
        "metadata": meta(role_name, t.labels),
        "spec": {"forProvider": {"assumeRolePolicy": _trust(service)}, "providerConfigRef": pc},
    }}
    for policy in policies:
        out[_attachment_key(who, policy)] = {
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
        "amiType": prov.get("amiType", DEFAULT_AMI_TYPE),
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


def deletion_order(t: Target) -> list[tuple[str, str]]:
    """The network's orders, and each IAM role with its policy attachments kept until
    whoever runs as the role is gone: the cluster for the cluster role, every node
    group for the node role.

    EKS deletes what it made in the account (the cluster's security groups, a node
    group's instances and network interfaces) with the role's permissions, so the
    role and its attachments must outlive the deletion (upjet provider-aws v2.6.0,
    ``eks.aws.m.upbound.io_clusters.yaml:259-266``, spec.forProvider.roleArn: "otherwise
    EKS cannot delete EKS managed EC2 infrastructure such as Security Groups on EKS
    Cluster deletion"; for node groups, "EC2 Instances and Elastic Network Interfaces":
    hashicorp/terraform-provider-aws ``website/docs/r/eks_node_group.html.markdown``,
    Example Usage, whose depends_on names all three node policy attachments). A role
    also outlives its attachments: IAM refuses to delete a role that still has managed
    policies attached (DeleteConflict), and the Role does not detach them
    (``iam.aws.m.upbound.io_roles.yaml:72-75``, forceDetachPolicies defaults to false).
    Only network resources are guarded by reference (``cluster.deletion_order``), so
    every order is listed here, those the refs show (``roleArnRef``, ``nodeRoleArnRef``,
    ``roleRef``) too.
    """
    users = {"cluster": ["cluster"], "node": [SOURCE.pool_key(p["name"]) for p in t.node_pools]}
    out = list(eks_network.deletion_order(t))
    for who, policies in (("cluster", CLUSTER_POLICIES), ("node", NODE_POLICIES)):
        role = f"role-{who}"
        out += [(user, role) for user in users[who]]
        for policy in policies:
            attachment = _attachment_key(who, policy)
            out.append((attachment, role))
            out += [(user, attachment) for user in users[who]]
    return out


SOURCE = Source(
    name="EKS", block="eks", provisioning="eks",
    infra=infra, pool=pool, kubeconfig=connection_secret, cluster_key="cluster",
    deletion_order=deletion_order,
)
