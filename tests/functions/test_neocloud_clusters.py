"""compose-inference-cluster with the neocloud sources: Nebius (mk8s) and Vultr (VKE).

Nebius: a network and subnet (unless ``network.subnetId``), the cluster, a CPU
system node group and a GPU node group per pool; its kubeconfig cannot sign in
by itself, so the kubernetes and helm provider configs carry the service-account
key of the Nebius ClusterProviderConfig, read as the required resource
``cloud-provider-config``; until that config is read and usable no provider
config is composed anew. Vultr: the VKE cluster with its CPU default pool and a
KubernetesNodePool per pool. Expected values are written out (facts from the
providers' CRDs and /tmp facts cited in nebius.py / vultr.py), not read back from
the implementation.
"""
from __future__ import annotations

import pytest
from modelplane.platform import ordering
from modelplane.validate.upstream import assert_valid

from tests.functions import clusters as ic
from tests.functions.neocloud import (
    CLOUD_CONFIG,
    H200,
    KEY_SECRET,
    gpu_pool,
    inputs,
    klass,
    nebius,
    nebius_config,
    vultr,
)
from tests.support import conditions, desired, fatal, request, run, status

PROVIDER_CONFIG_KEYS = ("providerconfig-helm", "providerconfig-kubernetes")
AUTOSCALED = {"minNodeCount": 1, "maxNodeCount": 4}
NEBIUS_IDENTITY = {"type": "NebiusServiceAccountCredentials", "source": "Secret", "secretRef": KEY_SECRET}


def fp(d: dict, key: str) -> dict:
    return d[key]["spec"]["forProvider"]


def ok(x: dict, required: dict, observed: dict | None = None) -> dict[str, dict]:
    rsp = ic.compose(x, required, observed)
    assert fatal(rsp) is None, fatal(rsp)
    return desired(rsp)


def kinds(d: dict[str, dict], prefixes: tuple[str, ...] = ("cluster", "net-", "nodegroup-", "nodepool-")) -> dict:
    return {k: (o["apiVersion"], o["kind"]) for k, o in d.items() if k.startswith(prefixes)}


# ----- Nebius: what is composed ------------------------------------------------------------

def test_nebius_composes_network_subnet_cluster_system_group_and_a_group_per_pool():
    d = ok(nebius([gpu_pool(), gpu_pool("big", 1)]), inputs())
    mk8s, vpc = "mk8s.nebius.m.upbound.io/v1beta1", "vpc.nebius.m.upbound.io/v1beta1"
    assert kinds(d) == {"cluster": (mk8s, "Cluster"), "net-network": (vpc, "Network"), "net-subnet": (vpc, "Subnet"),
                        "nodegroup-system": (mk8s, "NodeGroup"), "nodepool-gpu": (mk8s, "NodeGroup"),
                        "nodepool-big": (mk8s, "NodeGroup")}
    assert fp(d, "net-subnet")["networkIdRef"] == {"name": "prod-a-network"}
    assert fp(d, "net-subnet")["ipv4PrivatePools"] == {"useNetworkPools": True}
    plane = fp(d, "cluster")["controlPlane"]
    assert plane["subnetIdRef"] == {"name": "prod-a-subnet"} and "subnetId" not in plane
    # Public, so the control plane running Crossplane reaches it; three etcd members (HA).
    assert plane["endpoints"] == {"publicEndpoint": {}} and plane["etcdClusterSize"] == 3
    assert d["cluster"]["spec"]["writeConnectionSecretToRef"] == {"name": "prod-a-kubeconfig"}
    for key in ("nodegroup-system", "nodepool-gpu", "nodepool-big"):
        assert fp(d, key)["parentIdRef"] == {"name": "prod-a"}
        assert fp(d, key)["template"]["networkInterfaces"] == [{"subnetIdRef": {"name": "prod-a-subnet"}}]
    # Node group names are the pools' (unique within the cluster), the system group's "system".
    assert [fp(d, k)["name"] for k in ("nodegroup-system", "nodepool-gpu", "nodepool-big")] == ["system", "gpu", "big"]


@pytest.mark.parametrize("x", [
    nebius([gpu_pool(), gpu_pool("big", 1, **AUTOSCALED)]),
    nebius(network={"subnetId": "vpcsubnet-e0example"}, kubernetesVersion="1.35"),
], ids=["composed-network", "subnet-id"])
def test_every_nebius_resource_passes_its_upstream_schema(x):
    d = ok(x, inputs())
    assert len(d) > 20
    for _, obj in sorted(d.items()):
        assert_valid(obj)


def test_nebius_subnet_id_composes_no_network_and_every_part_uses_the_subnet():
    d = ok(nebius(network={"subnetId": "vpcsubnet-e0example"}), inputs())
    assert not [k for k in d if k.startswith(("net-", "usage-net-"))]
    assert fp(d, "cluster")["controlPlane"]["subnetId"] == "vpcsubnet-e0example"
    assert "subnetIdRef" not in fp(d, "cluster")["controlPlane"]
    for key in ("nodegroup-system", "nodepool-gpu"):
        assert fp(d, key)["template"]["networkInterfaces"] == [{"subnetId": "vpcsubnet-e0example"}]


def test_nebius_switching_to_an_own_subnet_drops_the_composed_network():
    observed = {k: ic.ready(v) for k, v in ok(nebius(), inputs()).items()}
    d = ok(nebius(network={"subnetId": "vpcsubnet-e0example"}), inputs(), observed)
    assert "net-network" not in d and "net-subnet" not in d


def test_nebius_pool_without_bounds_is_fixed_and_with_bounds_autoscales():
    d = ok(nebius([gpu_pool("fixed", 3), gpu_pool("auto", 2, **AUTOSCALED), gpu_pool("floor", 2, minNodeCount=0)]),
           inputs())
    assert fp(d, "nodepool-fixed")["fixedNodeCount"] == 3 and "autoscaling" not in fp(d, "nodepool-fixed")
    assert fp(d, "nodepool-auto")["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 4}
    assert "fixedNodeCount" not in fp(d, "nodepool-auto")
    # Only a lower bound: the count is the upper one.
    assert fp(d, "nodepool-floor")["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 2}


def test_nebius_gpu_groups_are_tainted_and_labelled_with_their_pool_on_the_node_template():
    d = ok(nebius(), inputs())
    tpl = fp(d, "nodepool-gpu")["template"]
    # Upper snake case: the Nebius API's spelling (node_group.proto taint effect enum).
    assert tpl["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    assert tpl["metadata"] == {"labels": {"modelplane.ai/pool": "gpu"}}
    assert tpl["resources"] == {"platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb"}
    assert tpl["bootDisk"] == {"sizeGibibytes": 200, "type": "NETWORK_SSD"}
    # The system group runs what tolerates no taint.
    assert "taints" not in fp(d, "nodegroup-system")["template"]


def test_nebius_drivers_preset_only_when_the_class_sets_it():
    with_drivers = klass("drv", nebius={**H200, "driversPreset": "cuda13.0", "bootDiskSizeGib": 512})
    d = ok(nebius([gpu_pool("a", cls="drv"), gpu_pool("b")]), inputs(with_drivers, klass()))
    assert fp(d, "nodepool-a")["template"]["gpuSettings"] == {"driversPreset": "cuda13.0"}
    assert fp(d, "nodepool-a")["template"]["bootDisk"]["sizeGibibytes"] == 512
    assert "gpuSettings" not in fp(d, "nodepool-b")["template"]


def test_nebius_preset_typo_on_a_known_platform_names_the_field_and_the_offered_presets():
    typo = klass("typo", nebius={"platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600g"})
    msg = fatal(ic.compose(nebius([gpu_pool(cls="typo")]), inputs(typo)))
    assert msg is not None
    assert "spec.provisioning.nebius.preset" in msg and "InferenceClass typo" in msg
    assert "1gpu-16vcpu-200gb" in msg and "8gpu-128vcpu-1600gb" in msg


def test_nebius_unknown_platform_is_passed_as_written():
    new = klass("new", nebius={"platform": "gpu-x900-sxm", "preset": "8gpu-999vcpu-9999gb"})
    d = ok(nebius([gpu_pool(cls="new")]), inputs(new))
    assert fp(d, "nodepool-gpu")["template"]["resources"] == {"platform": "gpu-x900-sxm", "preset": "8gpu-999vcpu-9999gb"}


def test_nebius_b200_sxm_a_takes_only_cuda12_8():
    def cls(drivers):
        return klass("b200", nebius={"platform": "gpu-b200-sxm-a", "preset": "8gpu-160vcpu-1792gb",
                                     "driversPreset": drivers})
    msg = fatal(ic.compose(nebius([gpu_pool(cls="b200")]), inputs(cls("cuda12"))))
    assert msg is not None and "spec.provisioning.nebius.driversPreset" in msg and "cuda12.8" in msg
    d = ok(nebius([gpu_pool(cls="b200")]), inputs(cls("cuda12.8")))
    assert fp(d, "nodepool-gpu")["template"]["gpuSettings"] == {"driversPreset": "cuda12.8"}


def test_nebius_pool_named_system_is_refused_naming_the_pool():
    msg = fatal(ic.compose(nebius([gpu_pool("gpu"), gpu_pool("system")]), inputs()))
    assert msg is not None and msg.startswith("spec.nodePools[1].name") and "system" in msg


def test_nebius_class_without_a_nebius_block_is_refused_naming_the_pool_class():
    msg = fatal(ic.compose(nebius(), inputs(klass(vultr={"plan": "vcg-l40s-16c-180g-48vram"}))))
    assert msg is not None and msg.startswith("spec.nodePools[0].class") and "provisioning.nebius" in msg


def test_nebius_block_omitted_takes_every_default():
    rsp = ic.compose(nebius(), inputs())
    assert fatal(rsp) is None
    d = desired(rsp)
    system = fp(d, "nodegroup-system")
    assert system["template"]["resources"] == {"platform": "cpu-d3", "preset": "4vcpu-16gb"}
    assert system["fixedNodeCount"] == 2
    assert fp(d, "cluster")["controlPlane"]["version"] == system["version"] == fp(d, "nodepool-gpu")["version"] == "1.34"
    assert {d[k]["spec"]["providerConfigRef"]["name"] for k in kinds(d)} == {"default"}


def test_nebius_block_omitted_reports_the_default_cache_class():
    assert status(ic.compose(nebius(), inputs()))["cache"] == {"storageClassName": "modelplane-rwx"}


def test_nebius_block_overrides_system_group_version_and_provider_config():
    x = nebius(kubernetesVersion="1.35", systemNodeGroup={"platform": "cpu-e2", "preset": "8vcpu-32gb", "nodeCount": 3},
               credentials={"providerConfigName": "team-b"}, cache={"storageClassName": "nfs"})
    rsp = ic.compose(x, inputs(config=nebius_config("team-b")))
    assert fatal(rsp) is None
    d = desired(rsp)
    system = fp(d, "nodegroup-system")
    assert system["template"]["resources"] == {"platform": "cpu-e2", "preset": "8vcpu-32gb"}
    assert system["fixedNodeCount"] == 3
    assert fp(d, "nodepool-gpu")["version"] == "1.35"
    assert {d[k]["spec"]["providerConfigRef"]["name"] for k in kinds(d)} == {"team-b"}
    assert status(rsp)["cache"] == {"storageClassName": "nfs"}
    req = rsp.requirements.resources[CLOUD_CONFIG]
    assert (req.api_version, req.kind, req.match_name) == ("nebius.m.upbound.io/v1beta1", "ClusterProviderConfig",
                                                           "team-b")


def test_nebius_kubernetes_version_below_dra_is_refused():
    msg = fatal(ic.compose(nebius(kubernetesVersion="1.33"), inputs()))
    assert msg is not None and msg.startswith("spec.cluster.nebius.kubernetesVersion") and "1.34" in msg


# ----- Nebius: the provider configs' identity -------------------------------------------------

def test_nebius_asks_for_its_provider_config_by_name_default():
    rsp = ic.compose(nebius(), inputs(config=...))
    req = rsp.requirements.resources[CLOUD_CONFIG]
    assert (req.api_version, req.kind, req.match_name) == ("nebius.m.upbound.io/v1beta1", "ClusterProviderConfig",
                                                           "default")


def test_nebius_provider_configs_sign_in_with_the_provider_configs_service_account_key():
    d = ok(nebius(), inputs())
    for key in PROVIDER_CONFIG_KEYS:
        spec = d[key]["spec"]
        assert spec["identity"] == NEBIUS_IDENTITY
        assert spec["credentials"] == {"source": "Secret", "secretRef": {
            "namespace": "modelplane-system", "name": "prod-a-kubeconfig", "key": "kubeconfig"}}
        assert_valid(d[key])


def test_nebius_identity_follows_the_configs_secret_ref():
    ref = {"namespace": "platform", "name": "sa-key", "key": "key.json"}
    d = ok(nebius(), inputs(config=nebius_config(credentials={"source": "Secret", "secretRef": ref})))
    assert {d[k]["spec"]["identity"]["secretRef"]["name"] for k in PROVIDER_CONFIG_KEYS} == {"sa-key"}
    assert d["providerconfig-helm"]["spec"]["identity"]["secretRef"] == ref


# (required inputs, condition reason, substrings of its message)
PROBLEMS = {
    "not fetched yet": (inputs(config=...), "WaitingForInputs", ["Nebius ClusterProviderConfig default"]),
    "does not exist": (inputs(config=None), "NotFound",
                       ["'default'", "spec.cluster.nebius.credentials.providerConfigName", "does not exist", "create it"]),
    "identity Token": (inputs(config=nebius_config(identity={"type": "Token"})), "InvalidInput",
                       ["spec.identity.type Token", "set ServiceAccount"]),
    "identity unset": (inputs(config=nebius_config(identity=None)), "InvalidInput",
                       ["spec.identity.type unset", "set ServiceAccount"]),
    "credentials not a Secret": (inputs(config=nebius_config(credentials={"source": "None"})), "InvalidInput",
                                 ["spec.credentials.source: Secret"]),
    "secretRef without key": (inputs(config=nebius_config(credentials={"source": "Secret", "secretRef": {
        "namespace": "crossplane-system", "name": "nebius-credentials"}})), "InvalidInput", ["secretRef namespace, name and key"]),
    "projectID missing": (inputs(config=nebius_config(projectID=None)), "InvalidInput", ["no spec.projectID", "set it"]),
}


@pytest.mark.parametrize("case", sorted(PROBLEMS))
def test_nebius_without_a_usable_identity_composes_no_provider_config_but_everything_else(case):
    required, reason, words = PROBLEMS[case]
    rsp = ic.compose(nebius(), required)
    assert fatal(rsp) is None
    d = desired(rsp)
    assert not set(PROVIDER_CONFIG_KEYS) & set(d)
    # Nothing may hold (or be held by) a provider config that is not there.
    assert not [k for k in d if k.startswith(ordering.HELD_BY_PROVIDER_CONFIG_PREFIXES)]
    assert {"cluster", "net-network", "net-subnet", "nodegroup-system", "nodepool-gpu", "release-lws",
            "gateway"} <= set(d)
    c = conditions(rsp)["InputsResolved"]
    assert (c.status, c.reason) == (3, reason)  # STATUS_CONDITION_FALSE
    for w in words:
        assert w in c.message, (w, c.message)
    if reason != "WaitingForInputs":
        assert c.message.endswith("the provider configs are composed once it is fixed")


@pytest.mark.parametrize("case", sorted(PROBLEMS))
def test_nebius_provider_configs_already_there_are_kept_unchanged(case):
    required, _, _ = PROBLEMS[case]
    observed = ic.all_ready(nebius(), inputs())
    rsp = ic.compose(nebius(), required, observed)
    assert fatal(rsp) is None
    d = desired(rsp)
    for key in PROVIDER_CONFIG_KEYS:
        assert d[key]["spec"] == observed[key]["spec"]
        assert d[key]["spec"]["identity"] == NEBIUS_IDENTITY
    # Kept, they still hold the cluster and its node groups.
    for held in ("cluster", "nodegroup-system", "nodepool-gpu"):
        assert set(ordering.held_by_provider_config_keys(held)) <= set(d)


def test_nebius_composite_is_not_ready_while_its_provider_configs_are_missing():
    everything = ic.all_ready(nebius(), inputs())
    # The cloud and the stack report Ready, but no provider config was ever composed.
    observed = {k: v for k, v in everything.items() if k not in PROVIDER_CONFIG_KEYS
                and not k.startswith(ordering.HELD_BY_PROVIDER_CONFIG_PREFIXES)}
    rsp = ic.compose(nebius(), inputs(config=nebius_config(identity={"type": "Token"})), observed)
    assert not set(PROVIDER_CONFIG_KEYS) & set(desired(rsp))
    assert rsp.desired.composite.ready != 1  # not READY_TRUE
    # Once the config is fixed, the same observed state with the configs is Ready.
    assert ic.compose(nebius(), inputs(), everything).desired.composite.ready == 1


# ----- deletion order -----------------------------------------------------------------------------

def _ident(obj: dict) -> tuple[str, str, str]:
    # The group too: both provider configs are ClusterProviderConfigs named after the cluster.
    return obj["apiVersion"].split("/")[0], obj["kind"], obj["metadata"]["name"]


def _ref(ref: dict) -> tuple[str, str, str]:
    return ref["apiVersion"].split("/")[0], ref["kind"], ref["resourceRef"]["name"]


def _deletion_rounds(d: dict[str, dict]) -> dict[tuple[str, str], int]:
    """Delete everything at once; a Usage refuses deleting its ``of`` while its ``by`` is there.
    Returns resource -> the round it goes in."""
    usages = [(_ref(u["spec"]["by"]), _ref(u["spec"]["of"])) for u in d.values() if u["kind"] == "Usage"]
    alive, when, i = {_ident(o) for o in d.values() if o["kind"] != "Usage"}, {}, 0
    while alive:
        gone = {r for r in alive if not any(of == r and by in alive for by, of in usages)}
        assert gone, f"deletion deadlock among {sorted(alive)}"
        when |= {r: i for r in gone}
        alive -= gone
        i += 1
    return when


@pytest.mark.parametrize("x,held", [
    (nebius([gpu_pool(), gpu_pool("big", 1)]), {"cluster", "nodegroup-system", "nodepool-gpu", "nodepool-big"}),
    (vultr([gpu_pool(), gpu_pool("big", 1)]), {"cluster", "nodepool-gpu", "nodepool-big"}),
], ids=["nebius", "vultr"])
def test_both_provider_configs_hold_the_cluster_and_its_node_groups(x, held):
    d = ok(x, inputs())
    by_ident = {_ident(o): k for k, o in d.items()}
    pairs = {(by_ident[_ref(u["spec"]["by"])], by_ident[_ref(u["spec"]["of"])])
             for k, u in d.items() if k.startswith(ordering.HELD_BY_PROVIDER_CONFIG_PREFIXES)}
    assert pairs == {(pc, k) for pc in PROVIDER_CONFIG_KEYS for k in held}


@pytest.mark.parametrize("x", [nebius([gpu_pool(), gpu_pool("big", 1)]), vultr([gpu_pool(), gpu_pool("big", 1)])],
                         ids=["nebius", "vultr"])
def test_deleting_takes_the_stack_then_the_configs_then_the_cloud(x):
    d = ok(x, inputs())
    when = _deletion_rounds(d)
    users = [_ident(o) for o in d.values() if ordering.provider_config_of(o) is not None]
    configs = [_ident(d[k]) for k in PROVIDER_CONFIG_KEYS]
    cloud = [_ident(d[k]) for k in d if k == "cluster" or k.startswith(("nodegroup-", "nodepool-"))]
    assert len(users) > 5 and len(cloud) >= 3
    assert min(when[c] for c in configs) > max(when[u] for u in users)
    assert min(when[c] for c in cloud) > max(when[c] for c in configs)
    network = [_ident(d[k]) for k in d if k.startswith("net-")]
    if network:  # Nebius: the subnet outlives the cluster and groups, the network the subnet
        subnet, net = _ident(d["net-subnet"]), _ident(d["net-network"])
        assert when[subnet] > max(when[c] for c in cloud)
        assert when[net] > when[subnet]


def test_nebius_network_usages_hold_the_subnet_for_the_cluster_and_every_group():
    d = ok(nebius(), inputs())
    held = {(u["spec"]["by"]["resourceRef"]["name"], u["spec"]["of"]["resourceRef"]["name"])
            for k, u in d.items() if k.startswith("usage-net-")}
    assert held == {("prod-a", "prod-a-subnet"), ("prod-a-system", "prod-a-subnet"), ("prod-a-gpu", "prod-a-subnet"),
                    ("prod-a-subnet", "prod-a-network")}
    assert not [u for k, u in d.items() if k.startswith(ordering.HELD_BY_PROVIDER_CONFIG_PREFIXES)
                and u["spec"]["of"]["kind"] in ("Network", "Subnet")]


# ----- Vultr --------------------------------------------------------------------------------------

def test_vultr_composes_the_cluster_with_a_system_default_pool_and_no_network():
    rsp = ic.compose(vultr(), inputs())
    assert fatal(rsp) is None
    d = desired(rsp)
    vke = "vke.vultr.m.upbound.io/v1beta1"
    assert kinds(d) == {"cluster": (vke, "Kubernetes"), "nodepool-gpu": (vke, "KubernetesNodePool")}
    assert not [k for k in d if k.startswith(("net-", "usage-net-"))]
    assert fp(d, "cluster") == {
        "region": "ewr", "version": "v1.35.5+1", "label": "prod-a",
        "nodePools": {"label": "system", "plan": "vc2-4c-8gb", "nodeQuantity": 2, "autoScaler": False}}
    assert d["cluster"]["spec"]["writeConnectionSecretToRef"] == {"name": "prod-a-kubeconfig"}
    assert status(rsp)["cache"] == {"storageClassName": "vultr-vfs-storage"}
    # Vultr asks for no provider config of its own: its kubeconfig signs in by itself.
    assert CLOUD_CONFIG not in rsp.requirements.resources


def test_vultr_block_overrides_the_default_pool_vpc_and_version():
    x = vultr(kubernetesVersion="v1.36.1+1", vpc={"id": "vpc-0123"}, systemNodePool={"plan": "vc2-8c-16gb", "nodeCount": 3},
              credentials={"providerConfigName": "team-b"})
    d = ok(x, inputs())
    assert fp(d, "cluster")["vpcId"] == "vpc-0123"
    assert fp(d, "cluster")["version"] == "v1.36.1+1"
    assert fp(d, "cluster")["nodePools"] == {"label": "system", "plan": "vc2-8c-16gb", "nodeQuantity": 3,
                                             "autoScaler": False}
    assert {d[k]["spec"]["providerConfigRef"]["name"] for k in ("cluster", "nodepool-gpu")} == {"team-b"}


def test_vultr_node_pool_is_tainted_labelled_and_refers_to_its_cluster():
    d = ok(vultr([gpu_pool("l40s", 2)]), inputs())
    assert fp(d, "nodepool-l40s") == {
        "clusterIdRef": {"name": "prod-a"}, "label": "l40s", "plan": "vcg-l40s-16c-180g-48vram",
        "labels": [{"key": "modelplane.ai/pool", "value": "l40s"}],
        # Node spelling: VKE applies taints as Kubernetes writes them.
        "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        "nodeQuantity": 2, "autoScaler": False}


def test_vultr_pool_with_bounds_runs_the_autoscaler_between_them():
    d = ok(vultr([gpu_pool("a", 2, **AUTOSCALED), gpu_pool("b", 3, minNodeCount=1)]), inputs())
    pick = ("autoScaler", "minNodes", "maxNodes", "nodeQuantity")
    assert {k: fp(d, "nodepool-a")[k] for k in pick} == {"autoScaler": True, "minNodes": 1, "maxNodes": 4,
                                                         "nodeQuantity": 2}
    assert {k: fp(d, "nodepool-b")[k] for k in pick} == {"autoScaler": True, "minNodes": 1, "maxNodes": 3,
                                                         "nodeQuantity": 3}


@pytest.mark.parametrize("extra", [{}, {"minNodeCount": 0}], ids=["fixed", "autoscaled"])
def test_vultr_pool_of_zero_nodes_never_asks_vke_for_zero(extra):
    rsp = ic.compose(vultr([gpu_pool("c", 0, **extra)]), inputs())
    msg = fatal(rsp)
    # Either refused, naming the count, or composed with at least one node.
    assert (msg or "").startswith("spec.nodePools[0].nodeCount") or \
        (msg is None and desired(rsp)["nodepool-c"]["spec"]["forProvider"]["nodeQuantity"] >= 1)


def test_vultr_provider_configs_read_the_kubeconfig_alone():
    d = ok(vultr(), inputs())
    for key in PROVIDER_CONFIG_KEYS:
        assert d[key]["spec"] == {"credentials": {"source": "Secret", "secretRef": {
            "namespace": "modelplane-system", "name": "prod-a-kubeconfig", "key": "kubeconfig"}}}


def test_every_vultr_resource_passes_its_upstream_schema():
    d = ok(vultr([gpu_pool(), gpu_pool("big", 1, **AUTOSCALED)], vpc={"id": "vpc-0123"}), inputs())
    assert len(d) > 20
    for _, obj in sorted(d.items()):
        assert_valid(obj)


@pytest.mark.parametrize("version", ["v1.33.4+1", "1.30"])
def test_vultr_version_without_dra_is_refused(version):
    msg = fatal(ic.compose(vultr(kubernetesVersion=version), inputs()))
    assert msg is not None and msg.startswith("spec.cluster.vultr.kubernetesVersion") and "1.34" in msg


def test_vultr_pool_named_system_is_refused_naming_the_pool():
    msg = fatal(ic.compose(vultr([gpu_pool("system")]), inputs()))
    assert msg is not None and msg.startswith("spec.nodePools[0].name") and "Vultr" in msg


# ----- compose-inference-class ------------------------------------------------------------------

@pytest.mark.parametrize("prov,want", [
    ({"nebius": H200}, ["Nebius"]),
    ({"vultr": {"plan": "vcg-l40s-16c-180g-48vram"}}, ["Vultr"]),
    ({"nebius": H200, "vultr": {"plan": "vcg-l40s-16c-180g-48vram"}, "eks": {"instanceType": "p5.48xlarge"}},
     ["EKS", "Nebius", "Vultr"]),
], ids=["nebius", "vultr", "three"])
def test_class_status_lists_the_neoclouds_it_provisions_on(prov, want):
    assert status(run("compose-inference-class", request(klass("c", **prov))))["providers"] == want



@pytest.mark.parametrize("build", [nebius, vultr], ids=["nebius", "vultr"])
def test_zones_on_a_neocloud_pool_are_refused_naming_the_field(build):
    """Neither Nebius node groups nor VKE node pools have a zone field: zones would be silently dropped."""
    msg = fatal(ic.compose(build([gpu_pool(zones=["a"])]), inputs(klass())))
    assert msg is not None and "spec.nodePools[0].zones" in msg and "remove zones" in msg
