"""The one controller role the lab plays itself: Envoy Gateway's status on Gateways.

On a real fleet Envoy Gateway (installed by the stack's Release) accepts the
``modelplane`` GatewayClass and gives each Gateway an address from a cloud
load balancer. The lab has neither the gateway's data plane nor a load
balancer, so this pass writes what Envoy Gateway would: GatewayClass
``Accepted``; Gateway ``Accepted``/``Programmed`` with one address from the
documentation range 198.51.100.0/24 (RFC 5737, never routed). It only fills a
status nobody else wrote, so it never fights a real controller.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from modelplane.kube.client import ApiError, Client
from modelplane.platform.gateway import ENVOY_CONTROLLER

API = "gateway.networking.k8s.io/v1"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _cond(typ: str, reason: str, generation: int) -> dict:
    return {"type": typ, "status": "True", "reason": reason, "message": "Modelplane lab stand-in for Envoy Gateway",
            "observedGeneration": generation, "lastTransitionTime": _now()}


def _has(status: Mapping[str, Any] | None, typ: str) -> bool:
    return any(c.get("type") == typ and c.get("status") == "True" for c in (status or {}).get("conditions") or [])


class Addresses:
    """198.51.100.x, one per (cluster, namespace, name), in order of first request."""

    def __init__(self) -> None:
        self.assigned: dict[str, str] = {}

    def get(self, key: str) -> str:
        if key not in self.assigned:
            n = len(self.assigned) + 10
            if n > 254:
                raise RuntimeError("lab: more than 244 Gateways; the documentation range is full")
            self.assigned[key] = f"198.51.100.{n}"
        return self.assigned[key]


def _list(client: Client, plural: str) -> list[dict]:
    try:
        return client.request("GET", f"/apis/{API}/{plural}").get("items") or []
    except ApiError as err:
        if err.code == 404:  # Gateway API not installed (yet)
            return []
        raise


def gateways_pass(client: Client, cluster: str, book: Addresses) -> int:
    """Accept our GatewayClasses, program and address our Gateways; returns how many it wrote."""
    ours = set()
    wrote = 0
    for gc in _list(client, "gatewayclasses"):
        if (gc.get("spec") or {}).get("controllerName") != ENVOY_CONTROLLER:
            continue
        ours.add(gc["metadata"]["name"])
        if not _has(gc.get("status"), "Accepted"):
            gc["status"] = {"conditions": [_cond("Accepted", "Accepted", gc["metadata"].get("generation", 1))]}
            wrote += _put(client, f"/apis/{API}/gatewayclasses/{gc['metadata']['name']}/status", gc)
    for gw in _list(client, "gateways"):
        if (gw.get("spec") or {}).get("gatewayClassName") not in ours:
            continue
        status = gw.get("status") or {}
        if status.get("addresses") and _has(status, "Programmed"):
            continue
        meta = gw["metadata"]
        gen = meta.get("generation", 1)
        gw["status"] = {
            "addresses": [{"type": "IPAddress", "value": book.get(f"{cluster}/{meta['namespace']}/{meta['name']}")}],
            "conditions": [_cond("Accepted", "Accepted", gen), _cond("Programmed", "Programmed", gen)],
        }
        wrote += _put(client, f"/apis/{API}/namespaces/{meta['namespace']}/gateways/{meta['name']}/status", gw)
    return wrote


def _put(client: Client, path: str, obj: dict) -> int:
    try:
        client.request("PUT", path, obj)
        return 1
    except ApiError as err:
        if err.code in (404, 409):  # gone or changed meanwhile: the next pass sees it again
            return 0
        raise
