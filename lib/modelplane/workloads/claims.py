"""DRA claims: one ResourceClaimTemplate per member that claims devices.

Only ``claim: DRA`` devices are claimed; ``Synthetic`` devices (a class that
publishes capacity without a DRA driver) are scheduled on by the pool's node
selector alone. Each device request becomes one ``exactly`` request with the
user's CEL selectors, so DRA matches the same expressions the scheduler did.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

RCT_API = "resource.k8s.io/v1"


def dra_devices(devices: Sequence[Any] | None) -> list[Any]:
    """The member's devices that are bound through DRA, in request order."""
    return [d for d in devices or () if d.claim == "DRA"]


def claim_template(name: str, namespace: str, devices: Sequence[Any], labels: dict[str, str]) -> dict:
    """A ResourceClaimTemplate requesting every DRA device of one member's pod."""
    requests = []
    for d in devices:
        exactly: dict[str, Any] = {
            "deviceClassName": d.deviceClassName or "",
            "allocationMode": "ExactCount",
            "count": d.count,
        }
        if d.selectors:
            exactly["selectors"] = [{"cel": {"expression": s.cel}} for s in d.selectors]
        requests.append({"name": d.name, "exactly": exactly})
    return {
        "apiVersion": RCT_API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"spec": {"devices": {"requests": requests}}},
    }
