"""compose-inference-cluster: the networks it composes (EKS, GKE, AKS) and AKS itself.

Builders come from clusters.py and cluster_networks.py; each test changes one
thing of a cluster a new user would write (EKS with only a region, GKE with
only a region, AKS with only a location) and asserts the part under test.
"""
from __future__ import annotations

import ipaddress
import re
from typing import Any

import pytest
from modelplane.platform import aks_names
from modelplane.validate.upstream import assert_valid

from tests.functions.cluster_networks import AKS_OBSERVED, aks, cluster, eks, gke, inputs, klass
from tests.functions.clusters import compose, pool, ready
from tests.support import conditions, desired, fatal, status


def fp(d: dict, key: str) -> dict:
    return d[key]["spec"]["forProvider"]


def names(refs: list[dict]) -> list[str]:
    return [r["name"] for r in refs]


# ----- every composed resource is valid upstream -------------------------------------

BIG = {"count": 3, "minNodeCount": 1, "maxNodeCount": 6}
VALID_CASES = {
    "eks only region": (eks([pool(), pool("big", **BIG, zones=["us-east-1b", "us-east-1d"])]), None),
    "eks subnetIds": (eks(subnetIds=["subnet-a", "subnet-b"]), None),
    "gke composed network": (gke([pool(), pool("big", **BIG)]), None),
    "gke existing network": (gke(network="shared-vpc", subnetwork="gpu-nodes"), None),
    "aks composed network": (aks([pool(), pool("h100-ib-pool-east", **BIG, zones=["1", "2"])]), AKS_OBSERVED),
    "aks existing group and subnet": (aks(resourceGroupName="platform", network={
        "subnetId": "/subscriptions/s/resourceGroups/platform/providers/Microsoft.Network/virtualNetworks/v/subnets/n"}),
        AKS_OBSERVED),
}


@pytest.mark.parametrize("case", sorted(VALID_CASES))
def test_every_composed_resource_passes_its_upstream_schema(case):
    x, observed = VALID_CASES[case]
    rsp = compose(x, inputs(), observed)
    assert fatal(rsp) is None
    d = desired(rsp)
    assert len(d) > 15
    for _, obj in sorted(d.items()):
        assert_valid(obj)


# ----- EKS: the VPC a new user gets ------------------------------------------------------

def test_eks_with_only_a_region_composes_a_vpc_with_public_and_private_subnets_in_three_zones():
    d = desired(compose(eks(), inputs()))
    assert fp(d, "net-vpc")["cidrBlock"] == "10.0.0.0/16"
    assert fp(d, "net-vpc")["enableDnsHostnames"] is True
    subnets = {k: fp(d, k) for k in d if k.startswith("net-subnet-")}
    assert {(s["availabilityZone"], s["cidrBlock"]) for s in subnets.values()} == {
        ("us-east-1a", "10.0.0.0/20"), ("us-east-1b", "10.0.16.0/20"), ("us-east-1c", "10.0.32.0/20"),
        ("us-east-1a", "10.0.128.0/21"), ("us-east-1b", "10.0.136.0/21"), ("us-east-1c", "10.0.144.0/21")}
    assert all(s["vpcIdRef"] == {"name": "prod-a-vpc"} for s in subnets.values())


@pytest.mark.parametrize("tier,role,public", [("public", "kubernetes.io/role/elb", True),
                                              ("private", "kubernetes.io/role/internal-elb", False)])
def test_eks_subnets_carry_the_load_balancer_tags_eks_documents(tier, role, public):
    sub = fp(desired(compose(eks(), inputs())), f"net-subnet-{tier}-us-east-1b")
    assert sub["tags"] == {"Name": f"prod-a-{tier}-us-east-1b", role: "1", "kubernetes.io/cluster/prod-a": "shared"}
    assert sub.get("mapPublicIpOnLaunch", False) is public


def test_eks_public_subnets_route_to_the_internet_gateway_and_private_ones_through_one_nat():
    d = desired(compose(eks(), inputs()))
    assert fp(d, "net-internetgateway")["vpcIdRef"] == {"name": "prod-a-vpc"}
    assert fp(d, "net-route-public-internet") | {} == {
        "region": "us-east-1", "routeTableIdRef": {"name": "prod-a-public"}, "destinationCidrBlock": "0.0.0.0/0",
        "gatewayIdRef": {"name": "prod-a-igw"}}
    assert fp(d, "net-route-private-nat")["natGatewayIdRef"] == {"name": "prod-a-nat"}
    nat = fp(d, "net-natgateway")
    assert nat["subnetIdRef"] == {"name": "prod-a-public-us-east-1a"}
    assert nat["allocationIdRef"] == {"name": "prod-a-nat-eip"} and fp(d, "net-eip-nat")["domain"] == "vpc"
    assocs = {k: (fp(d, k)["routeTableIdRef"]["name"], fp(d, k)["subnetIdRef"]["name"]) for k in d
              if k.startswith("net-rta-")}
    assert sorted(assocs.values()) == sorted(
        [(f"prod-a-{t}", f"prod-a-{t}-us-east-1{z}") for t in ("public", "private") for z in "abc"])


def test_eks_cluster_spans_every_subnet_and_node_groups_only_private_ones():
    d = desired(compose(eks([pool(), pool("zonal", zones=["us-east-1c"])]), inputs()))
    vpc_config = fp(d, "cluster")["vpcConfig"]
    assert "subnetIds" not in vpc_config
    assert sorted(names(vpc_config["subnetIdRefs"])) == sorted(
        f"prod-a-{t}-us-east-1{z}" for t in ("public", "private") for z in "ac")
    # The zonal pool names one zone; EKS needs two, so the region's first default joins it.
    assert names(fp(d, "nodepool-l4")["subnetIdRefs"]) == ["prod-a-private-us-east-1a", "prod-a-private-us-east-1c"]
    assert names(fp(d, "nodepool-zonal")["subnetIdRefs"]) == ["prod-a-private-us-east-1c"]


def test_eks_zone_keeps_its_subnet_range_when_another_zone_joins():
    before = desired(compose(eks([pool(zones=["us-east-1a", "us-east-1b"])]), inputs()))
    after = desired(compose(eks([pool(zones=["us-east-1a", "us-east-1b"]), pool("d", zones=["us-east-1d"])]), inputs()))
    for key in ("net-subnet-private-us-east-1b", "net-subnet-public-us-east-1b"):
        assert fp(before, key) == fp(after, key)
    assert "net-subnet-private-us-east-1c" not in after
    assert fp(after, "net-subnet-private-us-east-1d")["cidrBlock"] == "10.0.48.0/20"


def test_eks_custom_cidr_lays_out_inside_it():
    d = desired(compose(eks(network={"cidr": "172.20.0.0/20"}), inputs()))
    vpc = ipaddress.ip_network("172.20.0.0/20")
    subnets = [ipaddress.ip_network(fp(d, k)["cidrBlock"]) for k in d if k.startswith("net-subnet-")]
    assert len(subnets) == 6 and all(s.subnet_of(vpc) for s in subnets)
    assert not any(a.overlaps(b) for i, a in enumerate(subnets) for b in subnets[i + 1:])


def test_eks_region_without_a_b_zone_uses_its_own_first_three():
    d = desired(compose(cluster("EKS", {"region": "ap-northeast-1"}), inputs()))
    assert sorted(fp(d, k)["availabilityZone"] for k in d if k.startswith("net-subnet-private-")) == [
        "ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d"]


@pytest.mark.parametrize("x,field", [
    (eks(network={"cidr": "10.0.0.0/8"}), "spec.cluster.eks.network.cidr:"),
    (eks(network={"cidr": "10.0.0.1/16"}), "spec.cluster.eks.network.cidr:"),
    (eks([pool(zones=["us-west-2a"])]), "spec.nodePools[0].zones[0]:"),
    (eks([pool(), pool("x", zones=["us-east-1-bos-1a"])]), "spec.nodePools[1].zones[0]:"),
])
def test_eks_network_input_errors_name_the_field(x, field):
    msg = fatal(compose(x, inputs()))
    assert msg and msg.startswith(field), msg


def test_eks_with_subnet_ids_composes_no_network_and_uses_them():
    d = desired(compose(eks(subnetIds=["subnet-a", "subnet-b"]), inputs()))
    assert not [k for k in d if k.startswith(("net-", "usage-net-"))]
    assert fp(d, "cluster")["vpcConfig"]["subnetIds"] == ["subnet-a", "subnet-b"]
    assert fp(d, "nodepool-l4")["subnetIds"] == ["subnet-a", "subnet-b"]


def test_switching_to_subnet_ids_drops_the_composed_network_and_its_usages():
    observed = {k: ready(v) for k, v in desired(compose(eks(), inputs())).items()}
    assert "net-vpc" in observed and any(k.startswith("usage-net-") for k in observed)
    d = desired(compose(eks(subnetIds=["subnet-a", "subnet-b"]), inputs(), observed))
    assert not [k for k in d if k.startswith(("net-", "usage-net-"))]
    assert "cluster" in d and "nodepool-l4" in d


# ----- deletion order ------------------------------------------------------------------------

def _usages(d: dict) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """((kind, name) of by, (kind, name) of of) of every Usage: a provider config shares its cluster's name."""
    return [((u["spec"]["by"]["kind"], u["spec"]["by"]["resourceRef"]["name"]),
             (u["spec"]["of"]["kind"], u["spec"]["of"]["resourceRef"]["name"]))
            for u in d.values() if u["kind"] == "Usage"]


def _refs(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            if k.endswith("Ref") and isinstance(v, dict) and "name" in v:
                found.add(v["name"])
            elif k.endswith("Refs") and isinstance(v, list):
                found |= {r["name"] for r in v}
            else:
                found |= _refs(v)
    elif isinstance(value, list):
        for v in value:
            found |= _refs(v)
    return found


@pytest.mark.parametrize("x,observed", [(eks(), None), (gke(), None), (aks([pool(), pool("b")]), AKS_OBSERVED)],
                         ids=["eks", "gke", "aks"])
def test_every_network_resource_outlives_whatever_refers_to_it_and_the_order_has_no_cycle(x, observed):
    d = desired(compose(x, inputs(), observed))
    network = {o["metadata"]["name"] for k, o in d.items() if k.startswith("net-")}
    usages = set(_usages(d))
    by_names = {(by[1], of[1]) for by, of in usages}
    for key, obj in d.items():
        for used in _refs(obj["spec"].get("forProvider") or {}) & network:
            assert (obj["metadata"]["name"], used) in by_names, f"{key} uses {used} without a Usage"
    # No cycle: delete, round by round, whatever no remaining user holds; everything must go.
    left = set(usages)
    alive = {n for pair in usages for n in pair}
    while alive:
        deletable = {n for n in alive if not any(of == n for _, of in left)}
        assert deletable, f"deletion deadlock among {sorted(alive)}"
        alive -= deletable
        left = {(by, of) for by, of in left if by not in deletable}
    root = {"EKS": "prod-a-vpc", "GKE": "prod-a-vpc", "AKS": "prod-a-rg"}[x["spec"]["cluster"]["source"]]
    assert not [u for u in usages if u[0][1] == root], "the last network resource keeps nothing else alive"


def test_eks_nat_gateway_goes_before_the_internet_gateway_it_maps_addresses_through():
    d = desired(compose(eks(), inputs()))
    u = d["usage-net-internetgateway-by-net-natgateway"]
    assert u["spec"]["of"]["resourceRef"] == {"name": "prod-a-igw"}
    assert u["spec"]["by"] == {"apiVersion": "ec2.aws.m.upbound.io/v1beta1", "kind": "NATGateway",
                               "resourceRef": {"name": "prod-a-nat"}}
    assert u["spec"]["replayDeletion"] is True


def test_removed_pool_takes_its_network_usages_with_it():
    observed = {k: ready(v) for k, v in desired(compose(eks([pool(), pool("old")]), inputs())).items()}
    assert any(k.endswith("-by-nodepool-old") for k in observed)
    # The pool stays one call while its provider-config Usages go (test_inference_cluster), then
    # it goes with the Usages it holds its network through.
    first = desired(compose(eks(), inputs(), observed))
    d = desired(compose(eks(), inputs(), {k: v for k, v in observed.items() if k in first}))
    assert "nodepool-old" not in d
    assert not [k for k in d if k.endswith("-by-nodepool-old")]
    assert any(k.endswith("-by-nodepool-l4") for k in d)


# ----- GKE networking ----------------------------------------------------------------------------

def test_gke_without_a_network_composes_a_vpc_native_subnetwork_and_cloud_nat():
    d = desired(compose(gke(), inputs()))
    assert fp(d, "net-network") == {"autoCreateSubnetworks": False, "routingMode": "REGIONAL", "project": "proj-1"}
    sub = fp(d, "net-subnetwork")
    assert sub["networkRef"] == {"name": "prod-a-vpc"} and sub["region"] == "us-central1"
    assert sub["privateIpGoogleAccess"] is True
    ranges = {r["rangeName"]: r["ipCidrRange"] for r in sub["secondaryIpRange"]}
    c = fp(d, "cluster")
    assert c["networkRef"] == {"name": "prod-a-vpc"} and c["subnetworkRef"] == {"name": "prod-a-nodes"}
    assert c["networkingMode"] == "VPC_NATIVE"
    assert set(ranges) == {c["ipAllocationPolicy"]["clusterSecondaryRangeName"],
                           c["ipAllocationPolicy"]["servicesSecondaryRangeName"]}
    assert c["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": False}
    assert fp(d, "net-router")["networkRef"] == {"name": "prod-a-vpc"}
    nat = fp(d, "net-routernat")
    assert nat["routerRef"] == {"name": "prod-a-router"}
    assert nat["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"
    sc = d["storageclass"]["spec"]["forProvider"]["manifest"]
    assert sc["parameters"]["network"] == "prod-a-vpc"


def test_gke_with_an_existing_network_composes_none_and_joins_it():
    d = desired(compose(gke(network="projects/host/global/networks/shared-vpc", subnetwork="gpu-nodes"), inputs()))
    assert not [k for k in d if k.startswith(("net-", "usage-net-"))]
    c = fp(d, "cluster")
    assert (c["network"], c["subnetwork"], c["networkingMode"]) == (
        "projects/host/global/networks/shared-vpc", "gpu-nodes", "VPC_NATIVE")
    assert "privateClusterConfig" not in c  # no NAT known: nodes keep public addresses
    assert d["storageclass"]["spec"]["forProvider"]["manifest"]["parameters"]["network"] == "shared-vpc"


# ----- AKS -------------------------------------------------------------------------------------------

def test_aks_with_only_a_location_composes_group_network_cluster_and_pools():
    d = desired(compose(aks([pool(), pool("h100-ib-pool-east", count=4)]), inputs()))
    assert fp(d, "net-resourcegroup") == {"location": "eastus2"}
    assert fp(d, "net-virtualnetwork")["addressSpace"] == ["10.224.0.0/16"]
    assert fp(d, "net-virtualnetwork")["resourceGroupNameRef"] == {"name": "prod-a-rg"}
    sub = fp(d, "net-subnet")
    assert sub["addressPrefixes"] == ["10.224.0.0/17"] and sub["virtualNetworkNameRef"] == {"name": "prod-a-vnet"}
    assert sub["serviceEndpoints"] == ["Microsoft.Storage"]
    c = d["cluster"]
    assert c["kind"] == "KubernetesCluster" and c["spec"]["writeConnectionSecretToRef"] == {"name": "prod-a-kubeconfig"}
    cf = c["spec"]["forProvider"]
    assert cf["kubernetesVersion"] == "1.34" and cf["identity"] == {"type": "SystemAssigned"}
    assert cf["defaultNodePool"] == {"name": "system", "vmSize": "Standard_D4s_v5", "nodeCount": 2,
                                     "vnetSubnetIdRef": {"name": "prod-a-nodes"}}
    assert cf["networkProfile"]["networkPluginMode"] == "overlay"
    assert cf["storageProfile"] == {"fileDriverEnabled": True}
    np = d["nodepool-h100-ib-pool-east"]
    assert np["kind"] == "KubernetesClusterNodePool"
    assert np["metadata"]["name"] == "prod-a-h100-ib-pool-east"
    assert np["metadata"]["annotations"] == {"crossplane.io/external-name": "h100ibpo8ca4"}
    assert np["spec"]["forProvider"] | {} == {
        "kubernetesClusterIdRef": {"name": "prod-a"}, "mode": "User", "vmSize": "Standard_NC24ads_A100_v4",
        "osDiskSizeGb": 200, "osSku": "Ubuntu", "gpuDriver": "Install",
        "nodeLabels": {"modelplane.ai/pool": "h100-ib-pool-east"}, "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"],
        "vnetSubnetIdRef": {"name": "prod-a-nodes"}, "nodeCount": 4}


def test_aks_pool_name_is_stable_and_valid():
    name = aks_names.pool_name("h100-ib-pool-east")
    assert name == "h100ibpo8ca4"  # changing the mapping renames (replaces) every AKS pool in the field
    assert re.fullmatch(r"[a-z][a-z0-9]{0,11}", name)
    assert aks_names.pool_name("a100") == "a100"
    assert re.fullmatch(r"[a-z][a-z0-9]{0,11}", aks_names.pool_name("8x-h200"))


@pytest.mark.parametrize("a,b", [("h100-ib-pool-east", "h100ibpo8ca4"), ("system", None)])
def test_aks_pools_that_would_collide_are_refused_naming_both(a, b):
    pools = [pool(a)] + ([pool(b)] if b else [])
    msg = fatal(compose(aks(pools), inputs()))
    assert msg and msg.startswith(f"spec.nodePools[{len(pools) - 1}].name:"), msg
    assert f"'{a}'" in msg and (f"'{b}'" if b else "system pool") in msg
    assert f"'{aks_names.pool_name(a)}'" in msg


def test_aks_autoscaling_pool_and_zones_and_class_gpu_settings():
    cls = klass(aks={"vmSize": "Standard_ND96isr_H100_v5", "osDiskSizeGb": 512, "osDiskType": "Ephemeral",
                     "accelerator": {"gpuDriver": "None", "gpuInstance": "MIG3g"}})
    d = desired(compose(aks([pool(count=2, minNodeCount=0, maxNodeCount=4, zones=["1", "3"])]), inputs(cls)))
    f = fp(d, "nodepool-l4")
    assert (f["autoScalingEnabled"], f["minCount"], f["maxCount"], "nodeCount" in f) == (True, 0, 4, False)
    assert (f["zones"], f["osDiskSizeGb"], f["osDiskType"], f["gpuDriver"], f["gpuInstance"]) == (
        ["1", "3"], 512, "Ephemeral", "None", "MIG3g")


def test_aks_zone_outside_1_to_3_is_refused():
    msg = fatal(compose(aks([pool(zones=["eastus2-1"])]), inputs()))
    assert msg and msg.startswith("spec.nodePools[0].zones[0]:") and "1, 2 or 3" in msg


def test_aks_existing_group_and_subnet_compose_no_network():
    subnet = "/subscriptions/s/resourceGroups/platform/providers/Microsoft.Network/virtualNetworks/v/subnets/n"
    d = desired(compose(aks(resourceGroupName="platform", network={"subnetId": subnet}), inputs()))
    assert not [k for k in d if k.startswith(("net-", "usage-net-"))]
    assert fp(d, "cluster")["resourceGroupName"] == "platform"
    assert fp(d, "cluster")["defaultNodePool"]["vnetSubnetId"] == subnet
    assert fp(d, "nodepool-l4")["vnetSubnetId"] == subnet


def test_aks_network_contributor_waits_for_the_cluster_identity_and_the_subnet_id():
    assert "roleassignment-network" not in desired(compose(aks(), inputs()))
    d = desired(compose(aks(), inputs(), AKS_OBSERVED))
    assert fp(d, "roleassignment-network") == {
        "principalId": "00000000-0000-0000-0000-0000000000aa", "principalType": "ServicePrincipal",
        "roleDefinitionName": "Network Contributor",
        "scope": AKS_OBSERVED["net-subnet"]["status"]["atProvider"]["id"]}
    assert "usage-net-subnet-by-roleassignment-network" in d


def test_aks_reaches_the_cluster_through_its_connection_secret_and_stores_on_azure_files():
    rsp = compose(aks(), inputs())
    d = desired(rsp)
    assert d["providerconfig-helm"]["spec"]["credentials"]["secretRef"] == {
        "namespace": "modelplane-system", "name": "prod-a-kubeconfig", "key": "kubeconfig"}
    sc = d["storageclass"]["spec"]["forProvider"]["manifest"]
    assert (sc["metadata"]["name"], sc["provisioner"], sc["parameters"]["protocol"]) == (
        "modelplane-rwx", "file.csi.azure.com", "nfs")
    assert status(rsp)["cache"] == {"storageClassName": "modelplane-rwx"}
    assert {"release-lws", "release-dra-driver", "gateway", "usage-release-lws"} <= set(d)
    assert d["usage-release-lws"]["spec"]["of"]["kind"] == "KubernetesCluster"


def test_aks_class_without_an_aks_block_names_the_pool_and_the_block():
    msg = fatal(compose(aks(), inputs(klass(eks={"instanceType": "g6.xlarge"}))))
    assert msg and msg.startswith("spec.nodePools[0].class:") and "provisioning.aks" in msg


def test_aks_everything_ready_makes_the_cluster_ready():
    x = aks()
    first = desired(compose(x, inputs(), AKS_OBSERVED))
    observed = {k: ready(v) for k, v in first.items()}
    observed["cluster"]["status"]["atProvider"] = AKS_OBSERVED["cluster"]["status"]["atProvider"]
    gw = observed["gateway"]
    gw["status"]["atProvider"] = {"manifest": {**gw["spec"]["forProvider"]["manifest"],
                                               "status": {"addresses": [{"value": "203.0.113.20"}]}}}
    rsp = compose(x, inputs(), observed)
    assert rsp.desired.composite.ready == 1  # READY_TRUE
    assert conditions(rsp)["Provisioned"].message == "cluster prod-a: cluster and 1 node pool(s) ready"


def test_the_configuration_depends_on_the_providers_of_every_composed_cloud_kind():
    import yaml
    from modelplane import paths

    config = yaml.safe_load((paths.ROOT / "crossplane.yaml").read_text())
    packages = {d["package"].rsplit("/", 1)[1] for d in config["spec"]["dependsOn"]}
    # API group of what each cloud composes -> the upjet family package that serves it.
    family = {"ec2.aws.m.upbound.io": "provider-aws-ec2", "eks.aws.m.upbound.io": "provider-aws-eks",
              "iam.aws.m.upbound.io": "provider-aws-iam", "compute.gcp.m.upbound.io": "provider-gcp-compute",
              "container.gcp.m.upbound.io": "provider-gcp-container",
              "cloudplatform.gcp.m.upbound.io": "provider-gcp-cloudplatform",
              "azure.m.upbound.io": "provider-family-azure", "network.azure.m.upbound.io": "provider-azure-network",
              "containerservice.azure.m.upbound.io": "provider-azure-containerservice",
              "authorization.azure.m.upbound.io": "provider-azure-authorization"}
    groups = set()
    for x, observed in VALID_CASES.values():
        groups |= {o["apiVersion"].split("/")[0] for o in desired(compose(x, inputs(), observed)).values()
                   if ".upbound.io/" in o["apiVersion"]}
    assert groups == set(family), sorted(groups ^ set(family))
    assert {family[g] for g in groups} <= packages, sorted({family[g] for g in groups} - packages)
