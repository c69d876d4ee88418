"""Per-cluster cache phase, read from the observed remote Job and PVC.

    Failed     the Job's Failed condition is True (its message is reported)
    Ready      the Job is Complete (condition, or succeeded >= 1)
    Hydrating  the Job has an active pod
    Pending    everything else: not composed yet, PVC not Bound, Job not started

A Failed Job is not retried by us (its backoffLimit is spent): the Job's
name carries a hash of repo@revision, so fixing the source composes a new Job.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane import conditions as C

PENDING = "Pending"
HYDRATING = "Hydrating"
READY = "Ready"
FAILED = "Failed"

# Condition reason (lib/conditions.py has no such reason yet).
NO_MATCHING_CLUSTERS = C.NO_MATCHING_CLUSTERS


def phase(job: Mapping[str, Any], pvc: Mapping[str, Any]) -> tuple[str, str]:
    """(phase, message) from the remote Job and PVC statuses (empty when unknown)."""
    failed = C.find(job, "Failed")
    if failed is not None and failed.get("status") == "True":
        why = failed.get("message") or failed.get("reason") or "the hydration Job failed"
        return FAILED, f"{why}; fix spec.source (repo, revision, token): a new revision composes a new Job"
    if C.is_true(job, "Complete") or int(job.get("succeeded") or 0) >= 1:
        return READY, "weights hydrated"
    if int(job.get("active") or 0) >= 1:
        return HYDRATING, "downloading weights"
    if pvc.get("phase") != "Bound":
        return PENDING, "waiting for the PVC to bind (a WaitForFirstConsumer class binds when the Job starts)"
    return PENDING, "waiting for the hydration Job to start"


def entry(cluster: str, phase_: str, message: str, pvc_name: str, storage_class: str) -> dict:
    """One ``status.clusters[]`` item (docs/contracts.md)."""
    out = {"name": cluster, "phase": phase_, "pvcName": pvc_name}
    if storage_class:
        out["storageClassName"] = storage_class
    if message:
        out["message"] = message
    return out
