"""compose-inference-cluster: the identities a cloud cluster acts with outlive whoever acts with them.

EKS deletes a cluster's security groups and a node group's instances and
network interfaces with the permissions of the IAM role it runs as; AKS's
cluster identity needs its Network Contributor role assignment on the subnet
while the cluster and its node pools are there. So each role, each policy
attachment and the role assignment is held by a Usage per user. The expected
pairs are written out again on purpose rather than read from eks.py/aks.py:
they are the contract, not the implementation.
"""
from __future__ import annotations

import pytest
from modelplane.validate.upstream import assert_valid

from tests.functions.cluster_networks import AKS_OBSERVED, aks, eks, inputs
from tests.functions.clusters import compose, pool, ready
from tests.support import desired, fatal

NODE_POLICIES = ("amazonec2containerregistryreadonly", "amazoneks-cni-policy", "amazoneksworkernodepolicy")
TWO_POOLS = [pool(), pool("big", count=3)]


def held(d: dict, kind: str) -> set[tuple[str, str]]:
    """(by kind/name, of name) of every Usage whose ``of`` is a ``kind``."""
    return {(f"{u['spec']['by']['kind']}/{u['spec']['by']['resourceRef']['name']}", u["spec"]["of"]["resourceRef"]["name"])
            for u in d.values() if u["kind"] == "Usage" and u["spec"]["of"]["kind"] == kind}


def eks_expected(pools: list[str]) -> dict[str, set[tuple[str, str]]]:
    node_rpas = [f"prod-a-node-{p}" for p in NODE_POLICIES]
    return {
        "Role": {("Cluster/prod-a", "prod-a-cluster"), ("RolePolicyAttachment/prod-a-cluster-amazoneksclusterpolicy",
                                                         "prod-a-cluster")}
        | {(f"NodeGroup/prod-a-{p}", "prod-a-node") for p in pools}
        | {(f"RolePolicyAttachment/{r}", "prod-a-node") for r in node_rpas},
        "RolePolicyAttachment": {("Cluster/prod-a", "prod-a-cluster-amazoneksclusterpolicy")}
        | {(f"NodeGroup/prod-a-{p}", r) for p in pools for r in node_rpas},
    }


@pytest.mark.parametrize("block", [{}, {"subnetIds": ["subnet-a", "subnet-b"]}], ids=["composed-vpc", "subnet-ids"])
def test_eks_roles_and_attachments_outlive_the_cluster_and_every_node_group(block):
    d = desired(compose(eks(TWO_POOLS, **block), inputs()))
    want = eks_expected(["l4", "big"])
    for kind in ("Role", "RolePolicyAttachment"):
        assert held(d, kind) == want[kind], kind


def test_eks_identity_usages_sit_beside_what_they_hold_and_pass_the_upstream_schema():
    d = desired(compose(eks(), inputs()))
    u = d["usage-rpa-node-amazoneksworkernodepolicy-by-nodepool-l4"]
    assert u["metadata"]["namespace"] == "modelplane-system"
    assert u["metadata"]["labels"]["modelplane.ai/cluster"] == "prod-a"
    # Same namespace as the Usage: the ref names no namespace (ordering.py, finder.go:72-78).
    assert u["spec"] == {
        "of": {"apiVersion": "iam.aws.m.upbound.io/v1beta1", "kind": "RolePolicyAttachment",
               "resourceRef": {"name": "prod-a-node-amazoneksworkernodepolicy"}},
        "by": {"apiVersion": "eks.aws.m.upbound.io/v1beta1", "kind": "NodeGroup", "resourceRef": {"name": "prod-a-l4"}},
        "replayDeletion": True}
    for key in ("usage-role-cluster-by-cluster", "usage-role-node-by-rpa-node-amazoneks-cni-policy",
                "usage-rpa-cluster-amazoneksclusterpolicy-by-cluster"):
        assert_valid(d[key])


def test_aks_role_assignment_outlives_the_cluster_and_every_node_pool():
    d = desired(compose(aks(TWO_POOLS), inputs(), AKS_OBSERVED))
    assert held(d, "RoleAssignment") == {("KubernetesCluster/prod-a", "prod-a-network-contributor"),
                                         ("KubernetesClusterNodePool/prod-a-l4", "prod-a-network-contributor"),
                                         ("KubernetesClusterNodePool/prod-a-big", "prod-a-network-contributor")}
    assert ("RoleAssignment/prod-a-network-contributor", "prod-a-nodes") in held(d, "Subnet")
    for key in ("usage-roleassignment-network-by-cluster", "usage-roleassignment-network-by-nodepool-big"):
        assert d[key]["metadata"]["namespace"] == "modelplane-system"
        assert_valid(d[key])


def test_aks_role_assignment_on_a_subnet_of_the_users_is_held_too():
    subnet = "/subscriptions/s/resourceGroups/platform/providers/Microsoft.Network/virtualNetworks/v/subnets/n"
    x = aks(resourceGroupName="platform", network={"subnetId": subnet})
    d = desired(compose(x, inputs(), {"cluster": AKS_OBSERVED["cluster"]}))
    assert held(d, "RoleAssignment") == {("KubernetesCluster/prod-a", "prod-a-network-contributor"),
                                         ("KubernetesClusterNodePool/prod-a-l4", "prod-a-network-contributor")}


def test_aks_before_the_identity_is_known_there_is_nothing_to_hold():
    d = desired(compose(aks(), inputs()))
    assert "roleassignment-network" not in d and not held(d, "RoleAssignment")


def _deletion_rounds(d: dict) -> list[set[str]]:
    """Delete, round by round, every resource no remaining Usage holds; the rounds, by metadata.name+kind."""
    usages = [u for u in d.values() if u["kind"] == "Usage"]
    alive = {f"{o['kind']}/{o['metadata']['name']}" for o in d.values() if o["kind"] != "Usage"}
    rounds = []
    while alive:
        holds = {f"{u['spec']['of']['kind']}/{u['spec']['of']['resourceRef']['name']}" for u in usages
                 if f"{u['spec']['by']['kind']}/{u['spec']['by']['resourceRef']['name']}" in alive}
        gone = alive - holds
        assert gone, f"deletion deadlock among {sorted(alive)}"
        rounds.append(gone)
        alive -= gone
    return rounds


@pytest.mark.parametrize("x,observed,users,identities", [
    (eks(TWO_POOLS), None, {"Cluster/prod-a", "NodeGroup/prod-a-l4", "NodeGroup/prod-a-big"},
     {"Role/prod-a-cluster", "Role/prod-a-node", *(f"RolePolicyAttachment/prod-a-node-{p}" for p in NODE_POLICIES),
      "RolePolicyAttachment/prod-a-cluster-amazoneksclusterpolicy"}),
    (aks(TWO_POOLS), AKS_OBSERVED, {"KubernetesCluster/prod-a", "KubernetesClusterNodePool/prod-a-l4",
                                    "KubernetesClusterNodePool/prod-a-big"},
     {"RoleAssignment/prod-a-network-contributor"}),
], ids=["eks", "aks"])
def test_deleting_everything_takes_the_identities_only_after_their_users(x, observed, users, identities):
    rounds = _deletion_rounds(desired(compose(x, inputs(), observed)))
    when = {name: i for i, r in enumerate(rounds) for name in r}
    assert users | identities <= set(when)
    assert max(when[u] for u in users) < min(when[i] for i in identities), rounds


def test_removed_pool_takes_its_identity_usages_with_it():
    observed = {k: ready(v) for k, v in desired(compose(eks([pool(), pool("old")]), inputs())).items()}
    assert "usage-role-node-by-nodepool-old" in observed
    rsp = compose(eks(), inputs(), observed)
    assert fatal(rsp) is None
    d = desired(rsp)
    # The pool itself stays this call (its provider-config Usages go first); its identity
    # Usages go at once: a dropped Usage does not wait for its user.
    assert "nodepool-old" in d
    assert not [k for k in d if k.startswith(("usage-role-", "usage-rpa-")) and k.endswith("-by-nodepool-old")]
    assert held(d, "Role") == eks_expected(["l4"])["Role"]
    assert held(d, "RolePolicyAttachment") == eks_expected(["l4"])["RolePolicyAttachment"]
