"""The lab's builders: Nodes, ResourceSlices, DeviceClasses and storage from a fleet (no processes)."""
from __future__ import annotations

import base64
import copy

import pytest
from modelplane import paths
from modelplane.errors import InputError
from modelplane.physical import inventory as fleet
from modelplane.validate.admission import load_dir
from modelplane.validate.upstream import UpstreamSchemas


def _example_fleet() -> fleet.FleetInventory:
    xrs, others = load_dir(paths.EXAMPLES / "fleet")
    return fleet.read_fleet(xrs + others)


def _class(name: str, devices: list[dict]) -> dict:
    return {"apiVersion": fleet.API, "kind": "InferenceClass", "metadata": {"name": name}, "spec": {"devices": devices}}


def _cluster(name: str, pools: list[dict], source: str = "Existing", taints: list[dict] | None = None) -> dict:
    block = {"kubeconfigSecretRef": {"namespace": "ns", "name": "kc"}} if source == "Existing" else {}
    spec = {"cluster": {"source": source, source.lower(): block}, "nodePools": pools}
    if taints:
        spec["taints"] = taints
    return {"apiVersion": fleet.API, "kind": "InferenceCluster", "metadata": {"name": name}, "spec": spec}


GPU = {"name": "gpu", "driver": "gpu.nvidia.com", "count": 8, "deviceClassName": "gpu.nvidia.com",
       "attributes": {"productName": {"string": "NVIDIA H100"}, "cudaComputeCapability": {"version": "9.0.0"},
                      "gpu.nvidia.com/index": {"int": 3}, "nvlink": {"bool": True}},
       "capacity": {"memory": {"value": "80Gi"}}}
NIC = {"name": "nic", "driver": "nic.nvidia.com", "count": 8, "claim": "Synthetic",
       "attributes": {"linkType": {"string": "infiniband"}}}


def test_every_example_object_is_valid_upstream():
    f = _example_fleet()
    schemas = UpstreamSchemas.load()
    objects = [o for c in f.clusters for o in fleet.cluster_objects(f, c)]
    assert {o["kind"] for o in objects} == {"Node", "ResourceSlice", "DeviceClass", "StorageClass", "PersistentVolume"}
    errors = {f"{o['kind']}/{o['metadata']['name']}": schemas.validate(o) for o in objects}
    assert {k: v for k, v in errors.items() if v} == {}


def test_one_node_per_pool_node_with_pool_label_and_no_cluster_taints():
    f = _example_fleet()
    onprem = next(c for c in f.clusters if c.name == "onprem-west")
    nodes = fleet.nodes(onprem)
    assert [n["metadata"]["name"] for n in nodes] == [f"h200-{i}" for i in range(4)] + ["h100-0", "h100-1"]
    assert [n["metadata"]["labels"][fleet.POOL] for n in nodes] == ["h200"] * 4 + ["h100"] * 2
    for n in nodes:
        # onprem-west's spec.taints are the fleet scheduler's: nothing puts them on real nodes.
        assert "taints" not in n["spec"]
        assert n["metadata"]["annotations"] == {fleet.KWOK_ANNOTATION: "fake"}
        assert n["status"]["allocatable"] == fleet.NODE_CAPACITY


def test_provisioned_gpu_pools_carry_the_gpu_taint_their_node_pools_declare():
    f = _example_fleet()
    taints = {c.name: [dict(t) for t in c.taints] for c in f.clusters}
    gpu = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    assert taints["gke-us-central"] == [gpu]
    assert taints["eks-us-east"] == [gpu]
    assert gpu not in taints["onprem-west"]


def test_slices_publish_dra_devices_exactly_as_the_class_declares():
    f = fleet.read_fleet([_class("h100", [GPU, NIC]), _cluster("c", [{"name": "p", "class": "h100", "nodeCount": 2}])])
    c = f.clusters[0]
    slices = fleet.resource_slices(c, "p-1", f.classes["h100"])
    assert len(slices) == 1  # the Synthetic NIC has no driver publishing it
    s = slices[0]
    assert s["metadata"]["name"] == "p-1-gpu.nvidia.com"
    assert s["spec"]["driver"] == "gpu.nvidia.com"
    assert s["spec"]["nodeName"] == "p-1"
    assert s["spec"]["pool"] == {"name": "p-1", "generation": 1, "resourceSliceCount": 1}
    assert [d["name"] for d in s["spec"]["devices"]] == [f"gpu-{i}" for i in range(8)]
    for d in s["spec"]["devices"]:
        assert d["attributes"] == GPU["attributes"]
        assert d["capacity"] == {"memory": {"value": "80Gi"}}
    assert fleet.devices_total(f, c) == {"p": 16}


def test_slices_group_by_driver_and_split_past_the_dra_device_limit():
    many = [dict(GPU, name=f"g{i}", count=64) for i in range(3)]
    other = dict(GPU, name="tpu", driver="tpu.example.com", deviceClassName="tpu.example.com", count=2)
    f = fleet.read_fleet([_class("big", [*many, other]), _cluster("c", [{"name": "p", "class": "big", "nodeCount": 1}])])
    slices = fleet.resource_slices(f.clusters[0], "p-0", f.classes["big"])
    assert [(s["metadata"]["name"], len(s["spec"]["devices"]), s["spec"]["pool"]["resourceSliceCount"])
            for s in slices] == [("p-0-gpu.nvidia.com-0", 128, 2), ("p-0-gpu.nvidia.com-1", 64, 2),
                                 ("p-0-tpu.example.com", 2, 1)]
    names = [d["name"] for s in slices[:2] for d in s["spec"]["devices"]]
    assert len(set(names)) == 192
    schemas = UpstreamSchemas.load()
    assert [schemas.validate(s) for s in slices] == [[], [], []]
    classes = fleet.device_classes(f, f.clusters[0])
    assert [(d["metadata"]["name"], d["spec"]["selectors"][0]["cel"]["expression"]) for d in classes] == [
        ("gpu.nvidia.com", 'device.driver == "gpu.nvidia.com"'),
        ("tpu.example.com", 'device.driver == "tpu.example.com"'),
    ]


def test_a_device_class_claimed_by_two_drivers_selects_both():
    a = _class("a", [GPU])
    b = _class("b", [dict(GPU, driver="gpu.example.com")])
    f = fleet.read_fleet([a, b, _cluster("c", [{"name": "p", "class": "a", "nodeCount": 1},
                                             {"name": "q", "class": "b", "nodeCount": 1}])])
    (dc,) = fleet.device_classes(f, f.clusters[0])
    assert dc["spec"]["selectors"][0]["cel"]["expression"] == (
        'device.driver == "gpu.example.com" || device.driver == "gpu.nvidia.com"')


def test_storage_for_cache_classes():
    f = _example_fleet()
    by = {c.name: fleet.storage(c) for c in f.clusters}
    # GKE and AKS compose their StorageClass themselves: the lab only adds volumes for it.
    assert [o["kind"] for o in by["gke-us-central"]] == ["PersistentVolume"] * fleet.CACHE_VOLUMES
    assert [o["kind"] for o in by["aks-east"]] == ["PersistentVolume"] * fleet.CACHE_VOLUMES
    assert by["onprem-west"][0]["kind"] == "StorageClass"
    assert by["onprem-west"][0]["metadata"]["name"] == "modelplane-rwx"
    assert by["eks-us-east"][0]["metadata"]["name"] == "modelplane-rwx-efs"
    assert {o["spec"]["storageClassName"] for o in by["eks-us-east"][1:]} == {"modelplane-rwx-efs"}


def test_builders_are_deterministic():
    f = _example_fleet()
    first = [fleet.cluster_objects(f, c) for c in f.clusters]
    again = _example_fleet()
    assert first == [fleet.cluster_objects(again, c) for c in again.clusters]


def test_a_pool_naming_a_missing_class_is_an_error_naming_the_field():
    with pytest.raises(InputError) as err:
        fleet.read_fleet([_cluster("c", [{"name": "p", "class": "nope", "nodeCount": 1}])])
    assert err.value.field == "InferenceCluster/c: spec.nodePools[0].class"
    assert "add that InferenceClass" in err.value.message


def test_an_invalid_class_is_an_error_naming_the_class():
    bad = copy.deepcopy(GPU)
    del bad["deviceClassName"]
    with pytest.raises(InputError) as err:
        fleet.read_fleet([_class("x", [bad])])
    assert err.value.field == "InferenceClass/x: spec.devices[0].deviceClassName"


def test_duplicate_clusters_are_an_error():
    c = _cluster("c", [{"name": "p", "class": "a", "nodeCount": 1}])
    with pytest.raises(InputError, match="defined twice"):
        fleet.read_fleet([_class("a", [GPU]), c, c])


def test_kubeconfig_secret_has_the_shape_existing_clusters_reference():
    f = _example_fleet()
    by = {c.name: c for c in f.clusters}
    onprem = fleet.kubeconfig_secret(by["onprem-west"], "apiVersion: v1\nkind: Config\n")
    assert onprem["metadata"]["namespace"] == "modelplane-system"
    assert onprem["metadata"]["name"] == "onprem-west-kubeconfig"
    assert base64.b64decode(onprem["data"]["kubeconfig"]).decode() == "apiVersion: v1\nkind: Config\n"
    # A GKE cluster in the lab would be registered as Existing under <name>-kubeconfig.
    gke = fleet.kubeconfig_secret(by["gke-us-central"], "x")
    assert (gke["metadata"]["name"], list(gke["data"])) == ("gke-us-central-kubeconfig", ["kubeconfig"])
    assert UpstreamSchemas.load().validate(onprem) == []
