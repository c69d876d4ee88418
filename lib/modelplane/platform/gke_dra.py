"""What Google's "Prepare GKE infrastructure for DRA workloads" asks of a GKE GPU pool.

NVIDIA's DRA driver (the stack's ``draDriver``) publishes a node's GPUs only
where GKE's own GPU stack is off, so a DRA pool:

- disables GKE's driver installation (``gpuDriverVersion: INSTALLATION_DISABLED``),
- carries the node label ``gke-no-default-nvidia-gpu-device-plugin=true``, so
  GKE runs no device plugin there (the DRA driver's chart refuses to share a
  node with one), and
- gets its driver from Google's installer, which Modelplane composes as a
  DaemonSet on the workload cluster (``installer``). On COS that installer is
  preloaded on the node image (nothing is pulled) and writes the driver under
  /home/kubernetes/bin/nvidia, the DRA driver's ``nvidiaDriverRoot`` here.

The installer and the DRA kubelet plugin select nodes by that label. A GPU
pool already running with GKE's driver (built before Modelplane followed the
guide) is kept exactly as observed, whatever its class now says: GKE applies a
change of ``guestAccelerator`` only by replacing the pool, its nodes and the
replicas on them. Modelplane warns about such a *legacy* pool; the migration
is a new pool beside it, then a drain (docs/platform/add-a-cluster.md). A new
pool whose class still asks GKE for the driver (``LATEST``, ``DEFAULT``) is
refused, naming the class.

What DRA on GKE does not support is refused where the API can express it:
GKE installing the driver, and a GPU pool on a node image other than COS
(one DRA driver release has one driver root, and the installer here is
Google's COS installer). Time-sharing, MPS, MIG (``gpuSharingConfig``,
``gpuPartitionSize``) and node auto-provisioning have no field in the
InferenceClass or InferenceCluster API, so Modelplane never turns them on.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.errors import InputError
from modelplane.objects import remote_object
from modelplane.platform.clouds import CloudPool, Target
from modelplane.platform.common import NAMESPACE

DISABLED = "INSTALLATION_DISABLED"
NO_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"   # GKE sets it on every GPU node
DRIVER_ROOT = "/home/kubernetes/bin/nvidia"
COS_IMAGES = ("COS_CONTAINERD",)
# Google's COS installer image is preloaded on GKE's COS node images and matches
# the node's kernel, so it is never pulled; the pause image that keeps the pod
# running after the install is pinned.
COS_INSTALLER_IMAGE = "cos-nvidia-installer:fixed"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
# GoogleCloudPlatform/container-engine-accelerators nvidia-driver-installer/cos/
# daemonset-preloaded-latest.yaml: the installer's command with --version=latest.
INSTALLER_COMMAND = ("/cos-gpu-installer", "install", "--version=latest")
INSTALLER_NAME = "modelplane-nvidia-driver-installer"
INSTALLER_KEY = "gpu-driver-installer"

# Only nodes of DRA pools: a legacy pool's nodes already have GKE's driver.
DRA_NODE_TERMS = [{"matchExpressions": [
    {"key": ACCELERATOR_LABEL, "operator": "Exists"},
    {"key": NO_DEVICE_PLUGIN_LABEL, "operator": "In", "values": ["true"]},
]}]
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

# The DRA driver chart on GKE: the driver root above; its kubelet plugin on DRA
# pools' nodes (the chart's default affinity wants NFD labels GKE does not set)
# and tolerating GKE's GPU taint; no system-node-critical priority (GKE admits
# it in kube-system only); no ComputeDomain controller (it runs on control-plane
# nodes, which GKE does not show).
STACK_VALUES: Mapping[str, Mapping[str, Any]] = {"draDriver": {
    "nvidiaDriverRoot": DRIVER_ROOT,
    "resources": {"computeDomains": {"enabled": False}},
    "kubeletPlugin": {
        "priorityClassName": "",
        "tolerations": [dict(GPU_TOLERATION)],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": DRA_NODE_TERMS}}},
    },
}}


def check(field: str, prov: Mapping[str, Any]) -> None:
    """Refuse a DRA GPU pool GKE cannot serve; ``field`` names the pool."""
    image = prov.get("imageType")
    if image and str(image).upper() not in COS_IMAGES:
        raise InputError(f"{field}.class",
                         f"its InferenceClass sets provisioning.gke.imageType {image!r}, but GPU pools with "
                         f"Dynamic Resource Allocation on GKE run COS_CONTAINERD here: Modelplane installs the "
                         f"NVIDIA driver with Google's COS installer under {DRIVER_ROOT}, the DRA driver's "
                         f"driver root; drop imageType or set it to COS_CONTAINERD")


def kept_driver(p: CloudPool) -> dict[str, Any] | None:
    """A running GPU pool built with GKE's driver: its ``gpuDriverInstallationConfig`` as
    observed (``{}`` when it had none), kept as it is. None for a pool not running yet
    or already following the guide."""
    spec = ((p.observed or {}).get("spec") or {}).get("forProvider") or {}
    accelerators = (spec.get("nodeConfig") or {}).get("guestAccelerator") or []
    if not accelerators:
        return None
    config = dict(accelerators[0].get("gpuDriverInstallationConfig") or {})
    return None if config.get("gpuDriverVersion") == DISABLED else config


def accelerator(p: CloudPool, prov: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """nodeConfig.guestAccelerator and the node labels of a GPU pool.

    A running legacy pool keeps its driver mode and gets no label (the change
    would replace it); every other pool follows the guide, and a class that
    still asks GKE for the driver is refused for it.
    """
    acc = prov["accelerator"]
    guest: dict[str, Any] = {"type": acc["type"], "count": acc["count"]}
    kept = kept_driver(p)
    if kept is not None:
        return [{**guest, **({"gpuDriverInstallationConfig": kept} if kept else {})}], {}
    version = acc.get("gpuDriverVersion", DISABLED)
    if version != DISABLED:
        raise InputError(f"{p.field}.class",
                         f"InferenceClass {p.class_name!r} sets provisioning.gke.accelerator.gpuDriverVersion "
                         f"{version}, but a new GKE GPU pool runs NVIDIA's DRA driver, which needs GKE's driver "
                         f"installation off (Modelplane installs the driver); set it to {DISABLED} or drop it "
                         f"(a class can be edited before any pool uses it; otherwise create a new class)")
    check(p.field, prov)
    return [{**guest, "gpuDriverInstallationConfig": {"gpuDriverVersion": DISABLED}}], {NO_DEVICE_PLUGIN_LABEL: "true"}


def legacy_warning(t: Target, p: CloudPool) -> str | None:
    """What a kept legacy pool means, and the way out."""
    if kept_driver(p) is None:
        return None
    return (f"{p.field} (pool {p.name}): NodePool {t.key_name(p.name)} runs GKE's GPU driver and device plugin, so "
            f"NVIDIA's DRA driver publishes none of its GPUs; Modelplane keeps it as it runs, since changing its "
            f"driver would replace the pool and its nodes. Add a pool of a class without gpuDriverVersion beside it, "
            f"drain this one, then remove it (docs/platform/add-a-cluster.md, GKE)")


def installer_manifest() -> dict[str, Any]:
    """The DaemonSet that installs the NVIDIA driver on COS nodes of DRA pools.

    Google's installer (an init container, preloaded on the node) installs the
    driver built for the node's COS version into /home/kubernetes/bin/nvidia;
    a pause container then keeps the pod, so the DaemonSet reports ready once
    every DRA GPU node has its driver. The installer's MIG partitioning step is
    left out: MIG is not supported with DRA on GKE.
    """
    labels = {"app.kubernetes.io/name": INSTALLER_NAME, "app.kubernetes.io/managed-by": "modelplane"}
    host = {"dev": "/dev", "nvidia-install-dir-host": DRIVER_ROOT,
            "vulkan-icd-mount": f"{DRIVER_ROOT}/vulkan/icd.d", "root-mount": "/",
            "cos-tools": "/var/lib/cos-tools"}
    env = {"NVIDIA_INSTALL_DIR_HOST": DRIVER_ROOT, "NVIDIA_INSTALL_DIR_CONTAINER": "/usr/local/nvidia",
           "VULKAN_ICD_DIR_HOST": f"{DRIVER_ROOT}/vulkan/icd.d", "VULKAN_ICD_DIR_CONTAINER": "/etc/vulkan/icd.d",
           "ROOT_MOUNT_DIR": "/root", "COS_TOOLS_DIR_HOST": "/var/lib/cos-tools",
           "COS_TOOLS_DIR_CONTAINER": "/build/cos-tools"}
    mounts = {"nvidia-install-dir-host": "/usr/local/nvidia", "vulkan-icd-mount": "/etc/vulkan/icd.d",
              "dev": "/dev", "root-mount": "/root", "cos-tools": "/build/cos-tools"}
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": INSTALLER_NAME, "namespace": "kube-system", "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": INSTALLER_NAME}},
            # OnDelete: a changed installer reaches new nodes only. Rerunning it on a
            # node whose driver is loaded and in use by engines would fail to swap the
            # module (or leave the node Init-looping); an old node moves when replaced.
            "updateStrategy": {"type": "OnDelete"},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    # kube-system admits this priority; a node without its driver is no GPU node.
                    "priorityClassName": "system-node-critical",
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": DRA_NODE_TERMS}}},
                    "tolerations": [{"operator": "Exists"}],
                    "hostNetwork": True,
                    "hostPID": True,
                    "volumes": [{"name": n, "hostPath": {"path": p}} for n, p in host.items()],
                    "initContainers": [{
                        "name": "nvidia-driver-installer",
                        "image": COS_INSTALLER_IMAGE,
                        "imagePullPolicy": "Never",
                        "securityContext": {"privileged": True},
                        "resources": {"requests": {"cpu": "150m"}},
                        "env": [{"name": k, "value": v} for k, v in env.items()],
                        "volumeMounts": [{"name": n, "mountPath": p} for n, p in mounts.items()],
                        # The newest driver of the node's COS release, as Google's
                        # daemonset-preloaded-latest.yaml asks: GKE 1.34's default
                        # driver may predate 565, which the DRA driver needs.
                        "command": list(INSTALLER_COMMAND),
                    }],
                    "containers": [{"name": "pause", "image": PAUSE_IMAGE,
                                    "resources": {"requests": {"cpu": "1m", "memory": "8Mi"}}}],
                },
            },
        },
    }


# The DaemonSet is ready when every node it selects runs its pod (zero nodes: ready at once).
INSTALLER_READY_CEL = ("has(object.status) && has(object.status.desiredNumberScheduled) && "
                       "object.status.numberReady == object.status.desiredNumberScheduled")


def installer(name: str, provider_config: str, lbls: Mapping[str, str]) -> dict[str, dict]:
    """composition-resource-name -> the installer as a provider-kubernetes Object."""
    obj = remote_object(name, installer_manifest(), provider_config, namespace=NAMESPACE, labels=lbls,
                        readiness="DeriveFromCelQuery")
    obj["spec"]["readiness"]["celQuery"] = INSTALLER_READY_CEL
    return {INSTALLER_KEY: obj}
