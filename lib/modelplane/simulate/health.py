"""What a healthy fleet reports back: statuses for composed resources.

``modelplane simulate`` has no clusters, so after each render it plays the
part of every controller: a managed resource becomes Ready, a remote PVC is
Bound, a Job Complete, a Deployment Available, a Gateway gets an address.
Addresses come from the documentation range 203.0.113.0/24 (RFC 5737), handed
out in order of first request so a run is deterministic.

Resources named "unready" (by composed name or by metadata.name) get
``Ready=False`` and no remote status, to show how the tree waits.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TIMESTAMP = "2024-01-01T00:00:00Z"
_READY = {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": TIMESTAMP}
_SYNCED = {"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": TIMESTAMP}
_UNREADY = {"type": "Ready", "status": "False", "reason": "Creating", "lastTransitionTime": TIMESTAMP,
            "message": "left unready by modelplane simulate --unready"}


@dataclass
class AddressBook:
    """Hands out 203.0.113.x addresses, one per key, stable within a run."""

    assigned: dict[str, str] = field(default_factory=dict)

    def address(self, key: str) -> str:
        if key not in self.assigned:
            n = len(self.assigned) + 10
            if n > 254:
                raise RuntimeError("simulate: more than 244 load balancers; the documentation range is full")
            self.assigned[key] = f"203.0.113.{n}"
        return self.assigned[key]


def _conditions(ready: bool) -> list[dict]:
    return [copy.deepcopy(_READY if ready else _UNREADY), copy.deepcopy(_SYNCED)]


def remote_status(manifest: Mapping[str, Any], where: str, book: AddressBook) -> dict:
    """The status a healthy workload cluster reports for ``manifest``."""
    kind = manifest.get("kind", "")
    spec = manifest.get("spec") or {}
    name = (manifest.get("metadata") or {}).get("name", "")
    namespace = (manifest.get("metadata") or {}).get("namespace", "")
    key = f"{where}/{kind}/{namespace}/{name}"
    if kind == "PersistentVolumeClaim":
        modes = spec.get("accessModes") or ["ReadWriteMany"]
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
        return {"phase": "Bound", "accessModes": modes, "capacity": {"storage": storage}}
    if kind == "Job":
        return {
            "succeeded": 1,
            "startTime": TIMESTAMP,
            "completionTime": TIMESTAMP,
            "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": TIMESTAMP},
                {"type": "Complete", "status": "True", "lastTransitionTime": TIMESTAMP},
            ],
        }
    if kind in ("Deployment", "StatefulSet"):
        n = spec.get("replicas", 1)
        return {
            "replicas": n, "readyReplicas": n, "availableReplicas": n, "updatedReplicas": n,
            "observedGeneration": 1,
            "conditions": [{"type": "Available", "status": "True", "lastTransitionTime": TIMESTAMP}],
        }
    if kind == "LeaderWorkerSet":
        n = spec.get("replicas", 1)
        return {
            "replicas": n, "readyReplicas": n, "updatedReplicas": n,
            "conditions": [{"type": "Available", "status": "True", "lastTransitionTime": TIMESTAMP}],
        }
    if kind == "Gateway":
        return {
            "addresses": [{"type": "IPAddress", "value": book.address(key)}],
            "conditions": [
                {"type": "Accepted", "status": "True", "lastTransitionTime": TIMESTAMP},
                {"type": "Programmed", "status": "True", "lastTransitionTime": TIMESTAMP},
            ],
        }
    if kind == "Service" and spec.get("type") == "LoadBalancer":
        return {"loadBalancer": {"ingress": [{"ip": book.address(key)}]}}
    if kind == "Namespace":
        return {"phase": "Active"}
    return {}


def composed_status(obj: Mapping[str, Any], where: str, book: AddressBook, ready: bool) -> dict:
    """The status a healthy control plane reports for one composed resource."""
    api = obj.get("apiVersion", "")
    kind = obj.get("kind", "")
    status: dict[str, Any] = {"conditions": _conditions(ready)}
    if not ready:
        return status
    if api.startswith("kubernetes.m.crossplane.io/") and kind == "Object":
        manifest = copy.deepcopy(((obj.get("spec") or {}).get("forProvider") or {}).get("manifest") or {})
        remote = remote_status(manifest, where, book)
        if remote:
            manifest["status"] = remote
        status["atProvider"] = {"manifest": manifest}
    elif api.startswith("gateway.networking.k8s.io/") and kind == "Gateway":
        status.update(remote_status(obj, "control-plane", book))
    elif api.startswith("helm.m.crossplane.io/") and kind == "Release":
        status["atProvider"] = {"state": "deployed", "revision": 1}
    return status
