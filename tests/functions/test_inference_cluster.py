"""compose-inference-cluster, in-process through the real runtime.

Builders (clusters.py) make an XR, classes, replicas and observed children
with defaults; each table row changes one thing and asserts the part under test.
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.platform.ordering import HELD_BY_PROVIDER_CONFIG_PREFIXES, PROVIDER_CONFIG_USAGE_PREFIXES
from modelplane.validate.upstream import assert_valid

from tests.functions.clusters import BLOCKS, all_ready, compose, inputs, klass, pool, replica, xr
from tests.functions.shapes import Shape, assert_shape
from tests.support import conditions, desired, fatal, status

# ----- every composed resource is valid upstream ----------------------------

@pytest.mark.parametrize("source", sorted(BLOCKS))
def test_every_composed_resource_passes_its_upstream_schema(source):
    rsp = compose(xr(source, [pool(), pool("big", count=3, minNodeCount=1, maxNodeCount=6, zones=["z-a", "z-b"])]),
                  inputs(klass()))
    assert fatal(rsp) is None
    for _, obj in sorted(desired(rsp).items()):
        assert_valid(obj)


def test_eks_iam_roles_trust_their_services_and_hold_the_node_policies():
    d = desired(compose(xr("EKS"), inputs(klass())))
    assert '"Service":"eks.amazonaws.com"' in d["role-cluster"]["spec"]["forProvider"]["assumeRolePolicy"]
    assert '"Service":"ec2.amazonaws.com"' in d["role-node"]["spec"]["forProvider"]["assumeRolePolicy"]
    node_policies = sorted(o["spec"]["forProvider"]["policyArn"] for k, o in d.items() if k.startswith("rpa-node-"))
    assert node_policies == ["arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
                             "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
                             "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"]
    assert {o["spec"]["forProvider"]["roleRef"]["name"] for k, o in d.items() if k.startswith("rpa-node-")} == {"prod-a-node"}


# ----- what each source composes ---------------------------------------------

SHAPES = [
    Shape("gke cluster runs a DRA-capable version with workload identity and Filestore",
          xr("GKE"), "cluster", lambda o: (
              o["spec"]["forProvider"]["minMasterVersion"] == "1.34"
              and o["spec"]["forProvider"]["workloadIdentityConfig"] == {"workloadPool": "proj-1.svc.id.goog"}
              and o["spec"]["forProvider"]["addonsConfig"]["gcpFilestoreCsiDriverConfig"] == {"enabled": True}
              and o["spec"]["forProvider"]["deletionProtection"] is False
              and o["spec"]["forProvider"]["removeDefaultNodePool"] is True
              and o["spec"]["writeConnectionSecretToRef"] == {"name": "prod-a-kubeconfig"})),
    Shape("gke credentials name the cloud provider config",
          xr("GKE", name="prod-b") | {"spec": {**xr("GKE")["spec"], "cluster": {"source": "GKE", "gke": {
              "region": "europe-west4", "credentials": {"providerConfigName": "gcp-prod"}}}}},
          "cluster", lambda o: o["spec"]["providerConfigRef"] == {"kind": "ClusterProviderConfig", "name": "gcp-prod"}),
    Shape("gke enables file.googleapis.com and leaves it on at deletion",
          xr("GKE"), "service-filestore", lambda o: o["spec"]["forProvider"] == {
              "service": "file.googleapis.com", "disableOnDestroy": False, "project": "proj-1"}),
    Shape("gke node pool carries machine, GPU, driver left to Modelplane, pool and DRA labels, GPU taint",
          xr("GKE"), "nodepool-l4", lambda o: (
              o["spec"]["forProvider"]["nodeConfig"]["machineType"] == "g2-standard-8"
              and o["spec"]["forProvider"]["nodeConfig"]["guestAccelerator"] == [{
                  "type": "nvidia-l4", "count": 1,
                  "gpuDriverInstallationConfig": {"gpuDriverVersion": "INSTALLATION_DISABLED"}}]
              and o["spec"]["forProvider"]["nodeConfig"]["labels"] == {
                  "modelplane.ai/pool": "l4", "gke-no-default-nvidia-gpu-device-plugin": "true"}
              and o["spec"]["forProvider"]["nodeConfig"]["taint"] == [
                  {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
              and o["spec"]["forProvider"]["clusterRef"] == {"name": "prod-a"})),
    Shape("gke spot, disk size and type come from the class",
          xr("GKE"), "nodepool-l4", lambda o: (
              o["spec"]["forProvider"]["nodeConfig"]["spot"] is True
              and o["spec"]["forProvider"]["nodeConfig"]["diskSizeGb"] == 500
              and o["spec"]["forProvider"]["nodeConfig"]["diskType"] == "pd-ssd"),
          inputs(klass(gke={"machineType": "a3-highgpu-8g", "spot": True, "diskSizeGb": 500, "diskType": "pd-ssd"}))),
    Shape("gke fixed pool over zones that divide it counts nodes per zone",
          xr("GKE", [pool(count=4, zones=["us-central1-a", "us-central1-b"])]), "nodepool-l4", lambda o: (
              o["spec"]["forProvider"]["nodeCount"] == 2
              and o["spec"]["forProvider"]["nodeLocations"] == ["us-central1-a", "us-central1-b"]
              and "autoscaling" not in o["spec"]["forProvider"])),
    Shape("gke autoscaling pool uses total bounds",
          xr("GKE", [pool(count=2, minNodeCount=1, maxNodeCount=8)]), "nodepool-l4", lambda o: (
              o["spec"]["forProvider"]["autoscaling"] == {
                  "totalMinNodeCount": 1, "totalMaxNodeCount": 8, "locationPolicy": "ANY"}
              and "nodeCount" not in o["spec"]["forProvider"])),
    Shape("gke composes the modelplane-rwx Filestore StorageClass on the cluster",
          xr("GKE"), "storageclass", lambda o: (
              o["spec"]["forProvider"]["manifest"]["metadata"]["name"] == "modelplane-rwx"
              and o["spec"]["forProvider"]["manifest"]["provisioner"] == "filestore.csi.storage.gke.io"
              and o["spec"]["providerConfigRef"]["name"] == "prod-a")),
    Shape("eks cluster takes subnets, version and the cluster role",
          xr("EKS"), "cluster", lambda o: (
              o["spec"]["forProvider"]["vpcConfig"]["subnetIds"] == ["subnet-a", "subnet-b"]
              and o["spec"]["forProvider"]["version"] == "1.34"
              and o["spec"]["forProvider"]["roleArnRef"] == {"name": "prod-a-cluster"})),
    Shape("eks node group from the class with scaling, labels and taint",
          xr("EKS", [pool(count=2, maxNodeCount=5)]), "nodepool-l4", lambda o: (
              o["spec"]["forProvider"]["instanceTypes"] == ["p5.48xlarge"]
              and o["spec"]["forProvider"]["amiType"] == "AL2023_x86_64_NVIDIA"
              and o["spec"]["forProvider"]["capacityType"] == "SPOT"
              and o["spec"]["forProvider"]["diskSize"] == 300
              and o["spec"]["forProvider"]["scalingConfig"] == {"minSize": 2, "maxSize": 5, "desiredSize": 2}
              and o["spec"]["forProvider"]["labels"] == {"modelplane.ai/pool": "l4"}
              and o["spec"]["forProvider"]["taint"][0]["effect"] == "NO_SCHEDULE"),
          inputs(klass(eks={"instanceType": "p5.48xlarge", "capacityType": "SPOT", "diskSizeGb": 300}))),
    Shape("eks empty pool still has maxSize 1",
          xr("EKS", [pool(count=0)]), "nodepool-l4",
          lambda o: o["spec"]["forProvider"]["scalingConfig"] == {"minSize": 0, "maxSize": 1, "desiredSize": 0}),
    Shape("eks ClusterAuth writes the kubeconfig the provider configs read",
          xr("EKS"), "clusterauth", lambda o: (
              o["spec"]["writeConnectionSecretToRef"] == {"name": "prod-a-kubeconfig"}
              and o["spec"]["forProvider"]["clusterNameRef"] == {"name": "prod-a"})),
    Shape("gke provider config reads the cluster's connection secret",
          xr("GKE"), "providerconfig-kubernetes", lambda o: o["spec"]["credentials"] == {
              "source": "Secret", "secretRef": {"namespace": "modelplane-system", "name": "prod-a-kubeconfig",
                                                "key": "kubeconfig"}} and o["metadata"]["name"] == "prod-a"),
    Shape("existing helm provider config reads the user's secret with the default key",
          xr("Existing"), "providerconfig-helm", lambda o: o["spec"]["credentials"]["secretRef"] == {
              "namespace": "platform", "name": "prod-a-kubeconfig", "key": "kubeconfig"}),
    Shape("in-cluster gateway is an Object named modelplane in modelplane-system",
          xr("Existing"), "gateway", lambda o: (
              o["spec"]["forProvider"]["manifest"]["metadata"] == {"name": "modelplane", "namespace": "modelplane-system"}
              and o["spec"]["forProvider"]["manifest"]["spec"]["listeners"][0]["allowedRoutes"] == {
                  "namespaces": {"from": "All"}})),
    Shape("gke cluster may not be deleted before a release installed on it",
          xr("GKE"), "usage-release-lws", lambda o: (
              o["spec"]["of"] == {"apiVersion": "container.gcp.m.upbound.io/v1beta1", "kind": "Cluster",
                                  "resourceRef": {"name": "prod-a"}}
              and o["spec"]["by"]["resourceRef"] == {"name": "prod-a-lws"})),
]


@pytest.mark.parametrize("case", SHAPES, ids=lambda s: s.name)
def test_composed_shape(case: Shape):
    assert_shape(compose(case.x, inputs(klass()) if case.required is None else case.required), case)


def test_existing_composes_no_cloud_resources_nor_usages():
    d = desired(compose(xr("Existing"), inputs(klass())))
    # Only the Usages that hold its own provider configs for their users (tests/platform).
    assert not [k for k in d if k.startswith(("cluster", "nodepool-", "usage-", "role-", "storageclass"))
                and not k.startswith(PROVIDER_CONFIG_USAGE_PREFIXES)]


# ----- stack --------------------------------------------------------------------

def _chart(d: dict, key: str) -> dict:
    return d[key]["spec"]["forProvider"]


def test_stack_installs_every_component_with_pinned_versions():
    d = desired(compose(xr("Existing"), inputs(klass())))
    charts = {k: (_chart(d, k)["chart"]["name"], _chart(d, k)["chart"]["version"]) for k in d if k.startswith("release-")}
    assert charts == {
        "release-lws": ("lws", "0.10.0"),
        "release-inference-extension": ("inferencepool", "v1.6.0"),
        "release-dynamo-crds": ("dynamo-crds", "0.9.1"),
        "release-dynamo-platform": ("dynamo-platform", "0.9.1"),
        "release-envoy-gateway": ("gateway-helm", "v1.9.0"),
        "release-dra-driver": ("dra-driver-nvidia-gpu", "0.4.1"),
    }
    assert all(d[k]["spec"]["providerConfigRef"]["name"] == "prod-a" for k in charts)


def test_stack_version_override_moves_every_chart_of_the_component():
    d = desired(compose(xr("Existing", stack={"dynamo": {"version": "1.0.0"}}), inputs(klass())))
    assert _chart(d, "release-dynamo-crds")["chart"]["version"] == "1.0.0"
    assert _chart(d, "release-dynamo-platform")["chart"]["version"] == "1.0.0"
    assert _chart(d, "release-lws")["chart"]["version"] == "0.10.0"


def test_stack_values_merge_over_modelplane_values_and_cloud_overlay():
    x = xr("GKE", stack={"draDriver": {"values": {"resources": {"gpus": {"enabled": False}}, "logVerbosity": 6}}})
    values = _chart(desired(compose(x, inputs(klass()))), "release-dra-driver")["values"]
    assert values["resources"] == {"gpus": {"enabled": False}, "computeDomains": {"enabled": False}}
    assert (values["gpuResourcesEnabledOverride"], values["logVerbosity"], values["nvidiaDriverRoot"]) == (
        True, 6, "/home/kubernetes/bin/nvidia")


def test_stack_component_disabled_drops_its_release_and_usage_even_when_observed():
    x = xr("GKE", stack={"leaderWorkerSet": {"enabled": False}})
    observed = all_ready(xr("GKE"), inputs(klass()))
    d = desired(compose(x, inputs(klass()), observed))
    assert "release-lws" not in d and "usage-release-lws" not in d
    assert "release-envoy-gateway" in d


# ----- inputs: classes and replicas ------------------------------------------------

def test_class_not_fetched_keeps_the_observed_pool_and_waits():
    observed = all_ready(xr("GKE"), inputs(klass()))
    rsp = compose(xr("GKE"), {"modelreplicas": []}, observed)
    assert desired(rsp)["nodepool-l4"]["spec"] == observed["nodepool-l4"]["spec"]
    c = conditions(rsp)["InputsResolved"]
    assert (c.reason, "InferenceClass l4-1x" in c.message) == ("WaitingForInputs", True)


def test_class_not_fetched_composes_no_pool_but_the_cluster():
    d = desired(compose(xr("GKE"), {"modelreplicas": []}))
    assert "cluster" in d and "nodepool-l4" not in d


def test_first_call_of_the_requirements_loop_keeps_what_is_observed_and_composes_nothing_new():
    """Nothing fetched yet: Crossplane calls again with the inputs and keeps that answer, so the
    first answers only with its requirements, every observed child and the published status."""
    assert desired(compose(xr("GKE"), None)) == {}
    observed = all_ready(xr("GKE"), inputs(klass()))
    published = {"providerConfigName": "gke-us", "pools": [{"name": "l4", "class": "l4-1x", "nodes": 2,
                                                            "allocations": []}]}
    rsp = compose({**xr("GKE"), "status": published}, None, observed)
    assert fatal(rsp) is None
    assert set(desired(rsp)) == set(observed)
    assert status(rsp)["pools"] == published["pools"]
    c = conditions(rsp)["InputsResolved"]
    assert c.reason == "WaitingForInputs"
    assert set(rsp.requirements.resources) >= {"class-l4-1x", "modelreplicas"}


def test_missing_class_keeps_observed_pool_and_names_the_class():
    observed = all_ready(xr("GKE"), inputs(klass()))
    rsp = compose(xr("GKE"), {"class-l4-1x": [], "modelreplicas": []}, observed)
    assert fatal(rsp) is None
    assert "nodepool-l4" in desired(rsp)
    c = conditions(rsp)["InputsResolved"]
    assert c.reason == "NotFound" and "'l4-1x'" in c.message and "spec.nodePools[0].class" in c.message


def test_missing_class_composes_no_new_pool_but_the_others():
    x = xr("GKE", [pool(), pool("h100", cls="h100-8x")])
    d = desired(compose(x, {"class-l4-1x": [klass()], "class-h100-8x": [], "modelreplicas": []}))
    assert "nodepool-l4" in d and "nodepool-h100" not in d


def test_pool_removed_from_spec_is_dropped_once_no_provider_config_holds_it():
    observed = all_ready(xr("GKE", [pool(), pool("old")]), inputs(klass()))
    holds = {k for k in observed if k.startswith(HELD_BY_PROVIDER_CONFIG_PREFIXES) and k.endswith("-nodepool-old")}
    assert len(holds) == 2                                   # one per provider config
    # First its Usages go (a dropped Usage does not wait for its provider config);
    # deleting the pool now would be refused while they exist.
    first = desired(compose(xr("GKE"), inputs(klass()), observed))
    assert "nodepool-old" in first and not holds & set(first)
    assert first["nodepool-old"]["spec"] == observed["nodepool-old"]["spec"]
    # Once they are no longer observed, the pool goes.
    observed = {k: v for k, v in observed.items() if k in first}
    second = desired(compose(xr("GKE"), inputs(klass()), observed))
    assert "nodepool-old" not in second and "nodepool-l4" in second


@pytest.mark.parametrize("source,field", [("GKE", "gke"), ("EKS", "eks")])
def test_class_without_provisioning_for_the_cloud_is_fatal_naming_the_pool_class(source, field):
    rsp = compose(xr(source, [pool(), pool("cpu", cls="bare")]), inputs(klass(), klass("bare", provisioning=False)))
    msg = fatal(rsp)
    assert msg and msg.startswith("spec.nodePools[1].class:") and f"provisioning.{field}" in msg


def test_existing_cluster_accepts_a_class_without_provisioning():
    rsp = compose(xr("Existing", [pool(cls="bare")]), inputs(klass("bare", provisioning=False)))
    assert fatal(rsp) is None
    assert status(rsp)["pools"][0]["nodes"] == 2


@pytest.mark.parametrize("version,ok", [("1.34", True), ("1.35.2-gke.100", True), ("1.33", False), ("latest", False)])
def test_kubernetes_version_must_serve_dra(version, ok):
    x = xr("GKE")
    x["spec"]["cluster"]["gke"]["kubernetesVersion"] = version
    msg = fatal(compose(x, inputs(klass())))
    assert (msg is None) == ok
    if not ok:
        assert msg.startswith("spec.cluster.gke.kubernetesVersion:")


def test_source_without_its_block_is_fatal():
    x = xr("GKE")
    del x["spec"]["cluster"]["gke"]
    assert fatal(compose(x, inputs(klass()))).startswith("spec.cluster.gke:")


def test_requires_each_class_by_name_and_replicas_on_this_cluster():
    rsp = compose(xr("GKE", [pool(), pool("b", cls="h100"), pool("c", cls="h100")]), None)
    reqs = rsp.requirements.resources
    assert sorted(reqs) == ["class-h100", "class-l4-1x", "modelreplicas"]
    assert reqs["class-h100"].match_name == "h100" and reqs["class-h100"].kind == "InferenceClass"
    assert dict(reqs["modelreplicas"].match_labels.labels) == {"modelplane.ai/cluster": "prod-a"}
    assert reqs["modelreplicas"].namespace == ""


# ----- status -------------------------------------------------------------------------

def test_allocations_copy_replica_placements_sorted_by_order_then_replica():
    reps = [
        replica("b-0-prod-a", order="2026-01-02T00:00:00Z/ml-team/b/00000", deployment="b"),
        replica("a-1-prod-a", ns="other", order="2026-01-01T00:00:00Z/other/a/00001", deployment="a",
                placement=[{"pool": "l4", "pods": [{"count": 2, "devices": {"gpu": 8}, "gang": True}]},
                           {"pool": "cpu", "pods": [{"count": 1, "devices": {}, "gang": False}]}]),
        replica("a-0-prod-a", ns="other", order="2026-01-01T00:00:00Z/other/a/00001", deployment="a"),
    ]
    x = xr("Existing", [pool(), pool("cpu", cls="l4-1x")])
    st = status(compose(x, inputs(klass(), replicas=reps)))
    l4 = st["pools"][0]["allocations"]
    assert [a["replica"] for a in l4] == ["other/a-0-prod-a", "other/a-1-prod-a", "ml-team/b-0-prod-a"]
    assert l4[1] == {"replica": "other/a-1-prod-a", "deployment": "other/a",
                     "order": "2026-01-01T00:00:00Z/other/a/00001",
                     "pods": [{"count": 2, "devices": {"gpu": 8}, "gang": True}]}
    assert [a["replica"] for a in st["pools"][1]["allocations"]] == ["other/a-1-prod-a"]


def test_replicas_not_fetched_keep_published_allocations():
    x = xr("Existing")
    published = [{"replica": "ml-team/q-0-prod-a", "deployment": "ml-team/q", "order": "o",
                  "pods": [{"count": 1, "devices": {"gpu": 1}, "gang": False}]}]
    x["status"] = {"pools": [{"name": "l4", "class": "l4-1x", "nodes": 2, "allocations": published}]}
    rsp = compose(x, {"class-l4-1x": [klass()]})
    assert status(rsp)["pools"][0]["allocations"] == published
    assert conditions(rsp)["InputsResolved"].reason == "WaitingForInputs"


def test_status_names_provider_config_cache_and_gateway():
    st = status(compose(xr("EKS"), inputs(klass())))
    assert st["providerConfigName"] == "prod-a"
    assert st["cache"] == {"storageClassName": "modelplane-rwx-efs"}
    assert st["gateway"] == {"name": "modelplane", "namespace": "modelplane-system"}


def test_cache_class_override():
    x = xr("Existing")
    x["spec"]["cluster"]["existing"]["cache"] = {"storageClassName": "weka-rwx"}
    assert status(compose(x, inputs(klass())))["cache"] == {"storageClassName": "weka-rwx"}


def test_pool_nodes_count_only_once_the_node_pool_is_ready():
    observed = all_ready(xr("GKE"), inputs(klass()))
    assert status(compose(xr("GKE"), inputs(klass())))["pools"][0]["nodes"] == 0
    assert status(compose(xr("GKE"), inputs(klass()), observed))["pools"][0]["nodes"] == 2


# ----- readiness -------------------------------------------------------------------------

def test_everything_up_makes_the_cluster_ready_with_the_gateway_address():
    rsp = compose(xr("GKE"), inputs(klass()), all_ready(xr("GKE"), inputs(klass())))
    assert rsp.desired.composite.ready == 1  # READY_TRUE
    assert status(rsp)["gateway"]["address"] == "203.0.113.10"
    conds = conditions(rsp)
    assert [conds[t].status for t in ("Provisioned", "StackReady", "GatewayReady")] == [2, 2, 2]


@dataclass
class Unready:
    name: str
    key: str
    condition: str
    words: str


UNREADY = [
    Unready("cluster not ready", "cluster", "Provisioned", "waiting for Cluster to become Ready"),
    Unready("node pool not ready", "nodepool-l4", "Provisioned", "waiting for node pools l4"),
    Unready("a release not ready", "release-dynamo-platform", "StackReady", "dynamo-platform"),
    Unready("gateway has no address", "gateway", "GatewayReady", "waiting for Gateway"),
]


@pytest.mark.parametrize("case", UNREADY, ids=lambda u: u.name)
def test_one_child_not_ready_keeps_the_cluster_unready_and_says_why(case: Unready):
    observed = all_ready(xr("GKE"), inputs(klass()))
    observed[case.key]["status"] = {"conditions": [{"type": "Ready", "status": "False", "reason": "Creating"}]}
    rsp = compose(xr("GKE"), inputs(klass()), observed)
    assert rsp.desired.composite.ready == 2  # READY_FALSE
    c = conditions(rsp)[case.condition]
    assert c.status == 3 and case.words in c.message


def test_output_is_deterministic():
    observed = all_ready(xr("EKS"), inputs(klass()))
    a = compose(xr("EKS"), inputs(klass()), observed).SerializeToString(deterministic=True)
    b = compose(xr("EKS"), inputs(klass()), observed).SerializeToString(deterministic=True)
    assert a == b


def test_names_are_dns_labels_even_for_long_cluster_names():
    from modelplane.naming import is_dns_label
    d = desired(compose(xr("EKS", [pool("p" * 40)], name="c" * 60), inputs(klass())))
    assert all(is_dns_label(o["metadata"]["name"]) for o in d.values())


# ----- bring your own gateway ------------------------------------------------------

def test_own_gateway_class_installs_no_envoy_gateway_nor_gatewayclass_and_attaches_the_gateway_to_it():
    x = xr("GKE", gateway={"className": "istio"})
    observed = all_ready(xr("GKE"), inputs(klass()))  # it ran Envoy Gateway before: both go
    d = desired(compose(x, inputs(klass()), observed))
    assert not {"release-envoy-gateway", "usage-release-envoy-gateway", "gatewayclass", "usage-gatewayclass"} & set(d)
    assert d["gateway"]["spec"]["forProvider"]["manifest"]["spec"]["gatewayClassName"] == "istio"
    assert "release-lws" in d
    for obj in d.values():
        assert_valid(obj)


def test_own_gateway_class_cluster_is_ready_once_its_gateway_has_an_address():
    x = xr("Existing", gateway={"className": "traefik"})
    resp = compose(x, inputs(klass()), all_ready(x, inputs(klass()), address="198.18.1.1"))
    assert status(resp)["gateway"]["address"] == "198.18.1.1"
    conds = conditions(resp)
    assert [conds[t].status for t in ("StackReady", "GatewayReady")] == [2, 2]
