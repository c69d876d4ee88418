"""The GPU driver each cloud's pool gets pairs with the DRA driver the stack pins."""
from __future__ import annotations

import copy

from modelplane.platform import aks, eks, gke_dra, gpu_drivers, stack

from tests.functions.clusters import compose, inputs, klass, xr
from tests.functions.neocloud import H200, gpu_pool, nebius
from tests.functions.neocloud import inputs as inputs_neo
from tests.functions.neocloud import klass as klass_neo
from tests.support import desired, fatal


def _pinned(key: str) -> stack.Component:
    return next(c for c in stack.COMPONENTS if c.key == key)


def test_the_pinned_dra_driver_is_a_line_the_table_knows():
    comp = _pinned("draDriver")
    row = gpu_drivers.release_for(comp.version)
    assert row is not None, comp.version
    assert row.chart == comp.charts[0].name
    assert row.min_driver == 565, "0.4.x starts on 565 and later; 25.12 needed 580"


def test_every_known_cloud_driver_starts_the_pinned_dra_driver():
    need = gpu_drivers.release_for(_pinned("draDriver").version).min_driver
    for row in gpu_drivers.CLOUD_DRIVERS:
        assert row.source, row.cloud
        if row.min_branch is not None:
            assert row.min_branch >= need, f"{row.cloud}: driver {row.min_branch} < {need}"


def test_clouds_whose_driver_version_no_source_gave_are_named():
    """Unknown rows are stated, not hidden; the pairing page lists the same clouds."""
    assert {r.cloud for r in gpu_drivers.CLOUD_DRIVERS if r.min_branch is None} == {"GKE", "AKS", "Nebius", "Vultr"}


def test_the_table_says_what_the_cloud_modules_compose():
    assert gpu_drivers.cloud("EKS").composed == eks.DEFAULT_AMI_TYPE
    assert gpu_drivers.cloud("AKS").composed == aks.DEFAULT_GPU_DRIVER
    assert gpu_drivers.cloud("GKE").composed == " ".join(gke_dra.INSTALLER_COMMAND)
    init = gke_dra.installer_manifest()["spec"]["template"]["spec"]["initContainers"][0]
    assert init["command"] == list(gke_dra.INSTALLER_COMMAND)


def test_a_composed_eks_gpu_pool_gets_the_tables_ami():
    d = desired(compose(xr("EKS"), inputs(klass())))
    groups = [o for o in d.values() if o.get("kind") == "NodeGroup" and "taint" in o["spec"]["forProvider"]]
    assert groups and all(g["spec"]["forProvider"]["amiType"] == gpu_drivers.cloud("EKS").composed for g in groups)


def test_nebius_presets_that_start_the_pinned_dra_driver():
    need = gpu_drivers.release_for(_pinned("draDriver").version).min_driver
    assert gpu_drivers.nebius_presets_starting("gpu-h200-sxm", need) == ("cuda12.8", "cuda13.0")
    assert gpu_drivers.nebius_presets_starting("gpu-b200-sxm", need) == ("cuda12", "cuda12.8", "cuda13.0")
    assert gpu_drivers.nebius_min_branch("gpu-h200-sxm", "cuda14") is None


def test_gke_installer_changes_reach_new_nodes_only():
    """A running node keeps its loaded driver: the installer DaemonSet never restarts its pod."""
    assert gke_dra.installer_manifest()["spec"]["updateStrategy"] == {"type": "OnDelete"}


def _release(x: dict) -> dict:
    return desired(compose(x, inputs(klass())))["release-dra-driver"]["spec"]["forProvider"]


def test_the_renamed_chart_keeps_the_old_object_names():
    """nameOverride keeps the kubelet plugin DaemonSet's name and selector: Helm upgrades it in
    place rather than installing a second plugin beside the old one."""
    fp = _release(xr("Existing"))
    assert fp["chart"] == {"name": "dra-driver-nvidia-gpu", "version": "0.4.1",
                           "repository": "oci://registry.k8s.io/dra-driver-nvidia/charts"}
    assert fp["values"]["nameOverride"] == "nvidia-dra-driver-gpu"
    assert fp["namespace"] == "nvidia-dra-driver-gpu"


def test_a_version_of_the_old_line_installs_the_old_chart():
    fp = _release(xr("Existing", stack={"draDriver": {"version": "25.12.0"}}))
    assert (fp["chart"]["name"], fp["chart"]["repository"]) == ("nvidia-dra-driver-gpu",
                                                                 "https://helm.ngc.nvidia.com/nvidia")


def test_gke_values_still_apply_to_the_new_chart():
    values = _release(xr("GKE"))["values"]
    assert values["nvidiaDriverRoot"] == gke_dra.DRIVER_ROOT
    assert values["resources"]["computeDomains"] == {"enabled": False}
    assert values["kubeletPlugin"]["tolerations"] == [gke_dra.GPU_TOLERATION]


def _nebius(drivers: str, observed: dict | None = None):
    cls = klass_neo("gpu-1x", nebius={**H200, "driversPreset": drivers})
    return compose(nebius([gpu_pool()]), inputs_neo(cls), observed)


def test_a_new_nebius_group_with_a_driver_preset_too_old_is_refused_naming_the_field():
    msg = fatal(_nebius("cuda12"))
    assert msg is not None and "spec.provisioning.nebius.driversPreset" in msg
    assert "cuda12.8 or cuda13.0" in msg and "565" in msg
    assert fatal(_nebius("cuda12.8")) is None


def test_a_running_nebius_group_keeps_its_preset():
    """Refusing it would stop composing a running cluster; changing it would roll its nodes."""
    running = copy.deepcopy(desired(_nebius("cuda12.8"))["nodepool-gpu"])
    running["spec"]["forProvider"]["template"]["gpuSettings"] = {"driversPreset": "cuda12"}
    rsp = _nebius("cuda12", {"nodepool-gpu": running})
    assert fatal(rsp) is None, fatal(rsp)
    assert desired(rsp)["nodepool-gpu"]["spec"]["forProvider"]["template"]["gpuSettings"] == {"driversPreset": "cuda12"}


def test_the_upgrade_changes_one_release_in_place():
    """A cluster installed with the 25.12.0 pin keeps one Release object of the same name (the Helm
    release provider-helm upgrades); only its chart and values change."""
    old = copy.deepcopy(desired(compose(xr("Existing", stack={"draDriver": {"version": "25.12.0"}}),
                                        inputs(klass())))["release-dra-driver"])
    new = desired(compose(xr("Existing"), inputs(klass())))
    assert [k for k in new if k.startswith("release-dra")] == ["release-dra-driver"]
    assert new["release-dra-driver"]["metadata"]["name"] == old["metadata"]["name"]
    assert new["release-dra-driver"]["spec"]["forProvider"]["namespace"] == old["spec"]["forProvider"]["namespace"]
