"""The physical fleet as the reconcile loop sees it: two small protocols and their values.

``simulate``'s loop composes remote manifests for each workload cluster and
hands them to a ``PhysicalFleet``, which says what they became: workload
statuses, devices used per pool, pods that could not bind. Two fleets
implement it:

- ``modelplane.physical.simulated.Physical``: a model of every cluster on this
  machine (kube-scheduler's DRA allocation and the workload controllers,
  played in Python);
- ``modelplane.lab.LabPhysical``: real kube-apiservers, kube-scheduler, kwok
  and LWS started by ``modelplane lab up`` (``simulate --lab``).

The loop depends on this module only; it never asks which fleet it drives.
What differs is declared, not sniffed: a ``ClusterView`` whose
``holds_objects`` is true keeps the remote objects on real servers, so the
loop reads them back (``observed``), lets the cluster correct an Object's
status (``judge``: an apply the server refused is not Synced) and never
reuses a status it worked out before (the servers may have moved on).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

RemoteKey = tuple[str, str, str]   # kind, namespace, name of an object on a workload cluster


@dataclass(frozen=True)
class PoolUse:
    """Devices in use and devices published in one node pool of a cluster."""

    pool: str
    used: int
    total: int


@dataclass(frozen=True)
class PendingPod:
    """A pod that is not bound, and the scheduler's reason."""

    owner: str        # Kind/namespace/name of the workload
    pod: str
    reason: str


class ClusterView(Protocol):
    """One workload cluster after a sync."""

    hardware: Any          # the hardware the loop handed over (``physical.hardware.Hardware``)
    hardware_key: str      # its fingerprint: equal keys need no rebuild
    holds_objects: bool    # True: objects live on real servers (see the module docstring)

    def status(self, key: RemoteKey, now: str) -> dict | None:
        """The status of workload ``key`` (Deployment, LeaderWorkerSet, Job...), None when absent."""

    def generation(self, key: RemoteKey) -> int:
        """``metadata.generation`` of workload ``key`` (1 when absent)."""

    def observed(self, manifest: Mapping[str, Any]) -> dict | None:
        """The remote object of ``manifest`` as its server holds it; None when absent or not held."""

    def judge(self, obj: Mapping[str, Any], status: dict) -> dict:
        """``status`` of provider-kubernetes Object ``obj``, corrected by what the cluster said."""

    def capacity(self) -> list[PoolUse]:
        """Devices used / total per pool."""

    def pending(self) -> list[PendingPod]:
        """Every pod not bound, in creation order."""


class PhysicalFleet(Protocol):
    """Every workload cluster of a run, by InferenceCluster name."""

    clusters: Mapping[str, ClusterView]

    def sync(self, name: str, hardware: Any, hardware_key: str,
             manifests: Mapping[RemoteKey, Mapping[str, Any]], now: str) -> ClusterView:
        """Make cluster ``name`` hold exactly ``manifests`` on ``hardware``; its view once settled."""

    def forget(self, name: str) -> None:
        """The cluster is gone (its InferenceCluster deleted): nothing runs there any more."""
