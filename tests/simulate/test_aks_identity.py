"""simulate's stand-in Azure provider reports what real AKS does, so the RoleAssignment is composed.

compose-inference-cluster grants the AKS cluster identity Network Contributor on its node
subnet once the cluster reports the identity's principal ID and the subnet its resource ID
(platform/aks.py, role_assignment); a stand-in without them never showed that step.
"""
from __future__ import annotations

import shutil
import uuid

import pytest
from modelplane import paths
from modelplane.render import FunctionPool
from modelplane.simulate.health import cloud_at_provider
from modelplane.simulate.loop import simulate_dir
from modelplane.validate.upstream import UpstreamSchemas

PLATFORM = paths.EXAMPLES / "platform"


def _cluster(identity: dict | None) -> dict:
    fp = {"resourceGroupNameRef": {"name": "aks-east-rg"}, **({"identity": identity} if identity else {})}
    return {"apiVersion": "containerservice.azure.m.upbound.io/v1beta1", "kind": "KubernetesCluster",
            "metadata": {"name": "aks-east"}, "spec": {"forProvider": fp}}


def test_a_system_assigned_identity_reports_a_stable_principal_id():
    got = cloud_at_provider(_cluster({"type": "SystemAssigned"}))
    principal = got["identity"]["principalId"]
    assert uuid.UUID(principal) and principal == cloud_at_provider(_cluster({"type": "SystemAssigned"}))[
        "identity"]["principalId"]
    assert principal != cloud_at_provider({**_cluster({"type": "SystemAssigned"}), "metadata": {"name": "b"}})[
        "identity"]["principalId"]
    assert got["id"].endswith("/resourceGroups/aks-east-rg/providers/Microsoft.ContainerService/managedClusters/aks-east")


def test_no_identity_no_principal_and_other_kinds_report_nothing():
    assert "identity" not in cloud_at_provider(_cluster(None))
    assert cloud_at_provider({"apiVersion": "azure.m.upbound.io/v1beta1", "kind": "ResourceGroup",
                              "metadata": {"name": "rg"}, "spec": {"forProvider": {}}}) == {}


@pytest.fixture(scope="module")
def aks(tmp_path_factory):
    fleet = tmp_path_factory.mktemp("aks")
    for name in ("cluster-aks.yaml", "inference-classes-aks.yaml"):
        shutil.copy(PLATFORM / name, fleet / name)
    with FunctionPool() as pool:
        world, outcome = simulate_dir(fleet, pool=pool)
    assert outcome.converged, outcome.still_changing
    return world.xrs[("InferenceCluster", "", "aks-east")].composed


def test_simulate_composes_the_network_contributor_role_assignment(aks):
    at = {name: (obj.get("status") or {}).get("atProvider") or {} for name, obj in aks.items()}
    role = aks["roleassignment-network"]["spec"]["forProvider"]
    assert role == {"principalId": at["cluster"]["identity"]["principalId"], "principalType": "ServicePrincipal",
                    "roleDefinitionName": "Network Contributor", "scope": at["net-subnet"]["id"]}
    assert role["scope"].endswith("/virtualNetworks/aks-east-vnet/subnets/aks-east-nodes")


def test_the_statuses_reported_pass_the_provider_schema(aks):
    upstream = UpstreamSchemas.load()
    problems = [f"{n}: {e}" for n in ("cluster", "net-subnet", "roleassignment-network")
                for e in upstream.validate(aks[n])]
    assert problems == []
