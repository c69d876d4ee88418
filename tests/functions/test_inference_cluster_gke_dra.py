"""GKE GPU pools as Google's "Prepare GKE infrastructure for DRA workloads" asks:
GKE's driver installation and device plugin off, the driver installed by a
DaemonSet Modelplane composes, NVIDIA's DRA driver set for GKE nodes; what DRA
on GKE does not support refused; a pool running with GKE's driver kept as it
runs after an upgrade of Modelplane (never a silent replacement)."""
from __future__ import annotations

import copy

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.platform import gke_dra

from tests.functions.clusters import all_ready, compose, inputs, klass, pool, xr
from tests.support import conditions, desired, fatal, status

L4 = {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4", "count": 1}}


def gke_class(name: str = "l4-1x", **accelerator) -> dict:
    prov = copy.deepcopy(L4)
    prov["accelerator"].update(accelerator)
    return klass(name, gke=prov)


def node_config(d: dict, key: str = "nodepool-l4") -> dict:
    return d[key]["spec"]["forProvider"]["nodeConfig"]


def warnings(rsp) -> list[str]:
    return [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_WARNING]


def legacy_observed() -> dict:
    """A cluster composed before Modelplane followed the guide: its L4 pool was built with
    GKE's driver (LATEST), no DRA label, as the previous release composed it."""
    observed = all_ready(xr("GKE"), inputs(klass()))
    node = node_config(observed)
    node["guestAccelerator"] = [{"type": "nvidia-l4", "count": 1,
                                 "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}]
    node["labels"] = {"modelplane.ai/pool": "l4"}
    return observed


# ----- what a GPU pool gets ---------------------------------------------------------

def test_new_gpu_pool_turns_gke_driver_and_device_plugin_off():
    node = node_config(desired(compose(xr("GKE"), inputs(klass()))))
    assert node["guestAccelerator"][0]["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    assert node["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"


def test_cpu_pool_gets_no_accelerator_and_no_dra_label():
    cpu = klass("cpu", gke={"machineType": "n2-standard-8", "imageType": "UBUNTU_CONTAINERD"})
    rsp = compose(xr("GKE", [pool("cpu", "cpu")]), inputs(cpu))
    assert fatal(rsp) is None
    node = node_config(desired(rsp), "nodepool-cpu")
    assert "guestAccelerator" not in node and node["labels"] == {"modelplane.ai/pool": "cpu"}


@pytest.mark.parametrize("version", ["LATEST", "DEFAULT"])
def test_new_pool_of_a_class_asking_gke_for_the_driver_is_refused_naming_the_class(version):
    msg = fatal(compose(xr("GKE"), inputs(gke_class(gpuDriverVersion=version))))
    assert msg is not None and msg.startswith("spec.nodePools[0].class")
    assert f"gpuDriverVersion {version}" in msg and "INSTALLATION_DISABLED" in msg


def test_gpu_pool_on_ubuntu_is_refused_naming_the_image():
    prov = {**copy.deepcopy(L4), "imageType": "UBUNTU_CONTAINERD"}
    msg = fatal(compose(xr("GKE"), inputs(klass(gke=prov))))
    assert msg is not None and msg.startswith("spec.nodePools[0].class") and "COS_CONTAINERD" in msg


def test_gpu_pool_on_cos_is_accepted():
    prov = {**copy.deepcopy(L4), "imageType": "COS_CONTAINERD"}
    assert fatal(compose(xr("GKE"), inputs(klass(gke=prov)))) is None


def test_kubernetes_below_1_34_is_refused_naming_the_field():
    x = xr("GKE")
    x["spec"]["cluster"]["gke"]["kubernetesVersion"] = "1.33"
    msg = fatal(compose(x, inputs(klass())))
    assert msg is not None and msg.startswith("spec.cluster.gke.kubernetesVersion")


# ----- the driver installer and the DRA driver's values -----------------------------------

def test_driver_installer_daemonset_runs_on_dra_gpu_nodes_only():
    d = desired(compose(xr("GKE"), inputs(klass())))
    obj = d[gke_dra.INSTALLER_KEY]
    assert obj["spec"]["readiness"] == {"policy": "DeriveFromCelQuery", "celQuery": gke_dra.INSTALLER_READY_CEL}
    ds = obj["spec"]["forProvider"]["manifest"]
    assert (ds["kind"], ds["metadata"]["namespace"]) == ("DaemonSet", "kube-system")
    pod = ds["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [
        {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
        {"key": "gke-no-default-nvidia-gpu-device-plugin", "operator": "In", "values": ["true"]}]}]
    installer = pod["initContainers"][0]
    # Preloaded on GKE's COS image, matching the node's kernel: never pulled.
    assert (installer["image"], installer["imagePullPolicy"]) == ("cos-nvidia-installer:fixed", "Never")
    assert {"name": "NVIDIA_INSTALL_DIR_HOST", "value": "/home/kubernetes/bin/nvidia"} in installer["env"]
    host_paths = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"]}
    assert host_paths["nvidia-install-dir-host"] == "/home/kubernetes/bin/nvidia"
    assert {m["name"]: m["mountPath"] for m in installer["volumeMounts"]}["nvidia-install-dir-host"] == \
        "/usr/local/nvidia"
    assert all(":" in c["image"] and not c["image"].endswith(":latest") for c in pod["containers"])


def test_driver_installer_is_gke_only():
    d = desired(compose(xr("EKS"), inputs(klass())))
    assert gke_dra.INSTALLER_KEY not in d


def test_dra_driver_values_on_gke_select_dra_pools_and_tolerate_the_gpu_taint():
    d = desired(compose(xr("GKE"), inputs(klass())))
    values = d["release-dra-driver"]["spec"]["forProvider"]["values"]
    assert values["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"
    assert values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}}
    plugin = values["kubeletPlugin"]
    assert plugin["priorityClassName"] == ""
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in plugin["tolerations"]
    assert plugin["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"] == gke_dra.DRA_NODE_TERMS


# ----- order: the stack is ready once the driver is installed ------------------------------

def test_stack_is_not_ready_until_the_driver_installer_is():
    """The DRA driver's kubelet plugin waits on each node for the driver (its init
    container); the cluster is not reported ready before the installer is."""
    observed = all_ready(xr("GKE"), inputs(klass()))
    observed[gke_dra.INSTALLER_KEY].pop("status")
    rsp = compose(xr("GKE"), inputs(klass()), observed)
    stack_ready = conditions(rsp)["StackReady"]
    assert (stack_ready.status, "gpu-driver-installer" in stack_ready.message) == (fnv1.STATUS_CONDITION_FALSE, True)
    observed = all_ready(xr("GKE"), inputs(klass()))
    assert conditions(compose(xr("GKE"), inputs(klass()), observed))["StackReady"].status == fnv1.STATUS_CONDITION_TRUE


def test_upgrade_updates_an_installed_dra_driver_beside_the_new_installer():
    """A cluster from before: the DRA driver release is installed, the installer is new."""
    observed = all_ready(xr("GKE"), inputs(klass()))
    del observed[gke_dra.INSTALLER_KEY]
    d = desired(compose(xr("GKE"), inputs(klass()), observed))
    assert "release-dra-driver" in d and gke_dra.INSTALLER_KEY in d
    assert d["release-dra-driver"]["spec"]["forProvider"]["values"]["kubeletPlugin"]["affinity"]


# ----- upgrade: what a running GKE cluster's pool becomes ----------------------------------

def test_upgrade_keeps_a_running_legacy_pool_exactly_as_observed_and_warns():
    """A stored class carries LATEST (the former default, written at creation): the
    running pool's spec is unchanged, so the provider replaces nothing."""
    observed = legacy_observed()
    rsp = compose(xr("GKE"), inputs(gke_class(gpuDriverVersion="LATEST")), observed)
    assert fatal(rsp) is None
    assert desired(rsp)["nodepool-l4"]["spec"] == observed["nodepool-l4"]["spec"]
    assert [w for w in warnings(rsp) if "spec.nodePools[0] (pool l4)" in w and "drain" in w]


def test_class_edited_to_the_guide_still_keeps_the_running_legacy_pool():
    """Re-applying a class without gpuDriverVersion (the new default) must not replace
    the pool built from it: the change applies to new pools only."""
    observed = legacy_observed()
    rsp = compose(xr("GKE"), inputs(klass()), observed)
    assert fatal(rsp) is None
    assert desired(rsp)["nodepool-l4"]["spec"] == observed["nodepool-l4"]["spec"]
    assert warnings(rsp)


def test_migration_new_pool_beside_the_legacy_one_follows_the_guide():
    observed = legacy_observed()
    x = xr("GKE", [pool(), pool("l4-dra", "l4-dra")])
    rsp = compose(x, inputs(gke_class(gpuDriverVersion="LATEST"), gke_class("l4-dra")), observed)
    assert fatal(rsp) is None
    d = desired(rsp)
    assert d["nodepool-l4"]["spec"] == observed["nodepool-l4"]["spec"]
    new = node_config(d, "nodepool-l4-dra")
    assert new["guestAccelerator"][0]["gpuDriverInstallationConfig"]["gpuDriverVersion"] == "INSTALLATION_DISABLED"
    assert new["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"
    assert [w for w in warnings(rsp) if "pool l4)" in w] and not [w for w in warnings(rsp) if "pool l4-dra)" in w]


def test_running_dra_pool_is_not_warned_about():
    observed = all_ready(xr("GKE"), inputs(klass()))
    rsp = compose(xr("GKE"), inputs(klass()), observed)
    assert desired(rsp)["nodepool-l4"]["spec"] == observed["nodepool-l4"]["spec"]
    assert not [w for w in warnings(rsp) if "GKE's GPU driver" in w]
    assert status(rsp)["pools"]
