"""Which GPU driver each cloud's composed GPU pool gets, and which DRA driver starts on it.

Two tables of facts, each with its source:

- ``DRA_RELEASES``: per line of NVIDIA's DRA driver chart (``spec.stack.draDriver``),
  the oldest GPU driver branch its kubelet plugin starts on;
- ``CLOUD_DRIVERS``: per cloud, the field of the composed pool that chooses the GPU
  driver, the value Modelplane composes, and the oldest driver branch that value is
  known to install (None where no public source was read: the pairing is then the
  platform team's to check, and docs/platform/gpu-classes.md says so).

A test holds the tables to what the cloud modules compose and to the stack's pin.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DraRelease:
    line: str            # chart versions this row covers, e.g. "0.4" (0.4.x)
    chart: str
    min_driver: int      # oldest driver branch (major) the GPU kubelet plugin starts on
    source: str


DRA_RELEASES: tuple[DraRelease, ...] = (
    DraRelease("25.12", "nvidia-dra-driver-gpu", 580,
               "NVIDIA/k8s-dra-driver-gpu v25.12.0 cmd/gpu-kubelet-plugin/nvlib.go:481 calls go-nvlib v0.9.0 "
               "GetAddressingModeAsString, which calls nvmlDeviceGetAddressingMode without a symbol check "
               "(vendor/github.com/NVIDIA/go-nvlib/pkg/nvlib/device/device.go:151-152); NVML has it from 13.0 "
               "(driver 580) on"),
    DraRelease("0.4", "dra-driver-nvidia-gpu", 565,
               "kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1: go.mod:7 go-nvlib v0.11.0, whose "
               "GetAddressingModeAsString returns early without the symbol (vendor/.../device/device.go:154, "
               "NVIDIA/go-nvlib#87); docs/prerequisites.md:13 'v565 or later for GPU allocation' "
               "(570.158.01 for ComputeDomains)"),
)


def release_for(version: str) -> DraRelease | None:
    """The row covering chart ``version`` (None: a line not in the table)."""
    parts = version.lstrip("v").split(".")
    line = ".".join(parts[:2])
    return next((r for r in DRA_RELEASES if r.line == line), None)


@dataclass(frozen=True)
class CloudDriver:
    cloud: str
    field: str           # where the composed pool chooses its driver
    composed: str        # what Modelplane composes there (a class may override it)
    min_branch: int | None
    source: str


CLOUD_DRIVERS: tuple[CloudDriver, ...] = (
    CloudDriver("GKE", "installer DaemonSet command (gke_dra.INSTALLER_COMMAND)",
                "/cos-gpu-installer install --version=latest", None,
                "GoogleCloudPlatform/container-engine-accelerators nvidia-driver-installer/cos/"
                "daemonset-preloaded-latest.yaml (command with --version=latest): the newest driver of the "
                "node's COS release; GKE's per-version driver table was not read here"),
    CloudDriver("EKS", "NodeGroup spec.forProvider.amiType (eks.DEFAULT_AMI_TYPE)",
                "AL2023_x86_64_NVIDIA", 580,
                "EKS-optimized AL2023 NVIDIA AMI release v20260512 ships driver 580.159.03 (aws-samples/"
                "sample-eks-enterprise-quickstart docs/AMI_VERSIONS.md); a node group without releaseVersion "
                "starts on the newest release"),
    CloudDriver("AKS", "KubernetesClusterNodePool spec.forProvider.gpuDriver (aks.DEFAULT_GPU_DRIVER)",
                "Install", None,
                "AKS installs its own driver for the node image; its version was not read here"),
    CloudDriver("Nebius", "NodeGroup spec.forProvider.template.gpuSettings.driversPreset (the class's)",
                "as the class says", None,
                "the preset names a CUDA version: cuda13.0 needs driver 580 or later and cuda12.8 needs 570.26 "
                "or later (NVIDIA CUDA toolkit release notes, minimum driver per toolkit); cuda12 and cuda12.4 "
                "allow 550, which the DRA driver does not start on"),
    CloudDriver("Vultr", "none: a KubernetesNodePool has only a plan", "-", None,
                "VKE's GPU node images bring the driver; its version was not read here"),
)

# Nebius driver presets and the oldest driver branch the CUDA version they name needs
# (CUDA 12.4: 550, 12.8: 570, 13.0: 580). On gpu-b200-sxm ``cuda12`` is CUDA 12.8
# (nebius/api mk8s/v1/node_group.proto:227-238, as docs/platform/add-a-cluster.md reads it).
NEBIUS_PRESET_MIN_BRANCH: dict[str, int] = {"cuda12": 550, "cuda12.4": 550, "cuda12.8": 570, "cuda13.0": 580}
NEBIUS_PLATFORM_PRESET_MIN_BRANCH: dict[tuple[str, str], int] = {("gpu-b200-sxm", "cuda12"): 570}


def nebius_min_branch(platform: str, preset: str) -> int | None:
    """The oldest driver branch a Nebius preset may install on a platform (None: unknown preset)."""
    return NEBIUS_PLATFORM_PRESET_MIN_BRANCH.get((platform, preset), NEBIUS_PRESET_MIN_BRANCH.get(preset))


def nebius_presets_starting(platform: str, min_driver: int) -> tuple[str, ...]:
    """The known presets whose driver is ``min_driver`` or later on ``platform``."""
    return tuple(sorted(p for p in NEBIUS_PRESET_MIN_BRANCH
                        if (nebius_min_branch(platform, p) or 0) >= min_driver))


def cloud(name: str) -> CloudDriver:
    return next(c for c in CLOUD_DRIVERS if c.cloud == name)
