"""Per-cluster cache phase, read from the observed remote Job and PVC.

    Failed     the Job's Failed condition is True (its message is reported)
    Ready      the Job is Complete (condition, or succeeded >= 1)
    Hydrating  the Job has an active pod
    Pending    everything else: not composed yet, PVC not Bound, Job not started

A Failed Job is not retried by us (its backoffLimit is spent). Its name
carries a hash of repo@revision and nothing else, so only a new repo or
revision composes a new Job; any other fix (the token, the volume's size)
needs the failed Job deleted on the cluster, which provider-kubernetes then
creates again. The Job's condition says only that its pods failed
(BackoffLimitExceeded), never why: the message names the Job and what it
downloaded, lists what to check, and claims no cause.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane import conditions as C

from .hydrate import Hydration

PENDING = "Pending"
HYDRATING = "Hydrating"
READY = "Ready"
FAILED = "Failed"

# Condition reason (lib/conditions.py has no such reason yet).
NO_MATCHING_CLUSTERS = C.NO_MATCHING_CLUSTERS


def phase(job: Mapping[str, Any], pvc: Mapping[str, Any], ran: Hydration | None = None) -> tuple[str, str]:
    """(phase, message) from the remote Job and PVC statuses (empty when unknown);
    ``ran``: what the Job downloads, to name it when it failed."""
    failed = C.find(job, "Failed")
    if failed is not None and failed.get("status") == "True":
        why = ": ".join(p for p in (failed.get("reason"), failed.get("message")) if p) or "its pods failed"
        return FAILED, failed_message(why, ran)
    if C.is_true(job, "Complete") or int(job.get("succeeded") or 0) >= 1:
        return READY, "weights hydrated"
    if int(job.get("active") or 0) >= 1:
        return HYDRATING, "downloading weights"
    if pvc.get("phase") != "Bound":
        return PENDING, "waiting for the PVC to bind (a WaitForFirstConsumer class binds when the Job starts)"
    return PENDING, "waiting for the hydration Job to start"


def failed_message(why: str, ran: Hydration | None) -> str:
    """What failed, what to check and how to run it again (the cause is only in the pod logs)."""
    what = f"hydration Job {ran.job} for {ran.source}" if ran else "the hydration Job"
    if ran is None or ran.token:
        token = "the token in spec.source.huggingFace.tokenSecretRef has access to it"
    else:
        token = "spec.source.huggingFace.tokenSecretRef names a token with access to it"
    return (f"{what} failed ({why}); its pod logs say why. Check that the repo and revision exist, "
            f"that sizeGiB holds the weights and, if the repo is gated, that {token}. "
            "A new repo or revision composes a new Job; after any other fix, delete this Job on the "
            "cluster and it runs again")


def entry(cluster: str, phase_: str, message: str, pvc_name: str, storage_class: str) -> dict:
    """One ``status.clusters[]`` item (docs/contracts.md)."""
    out = {"name": cluster, "phase": phase_, "pvcName": pvc_name}
    if storage_class:
        out["storageClassName"] = storage_class
    if message:
        out["message"] = message
    return out
