"""Gateway API objects Modelplane runs on Envoy Gateway (or a class the team brings), and their address.

The same GatewayClass and Gateway shape serves two places: the control plane
(InferenceGateway, composed directly) and every workload cluster
(InferenceCluster, wrapped in provider-kubernetes Objects). Routes come from
every namespace, because ML teams' HTTPRoutes live in their own namespaces.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.platform.common import ENVOY_CONTROLLER, GATEWAY_CLASS, GATEWAY_NAME, NAMESPACE

API = "gateway.networking.k8s.io/v1"
# Readiness of the remote Objects that carry them: Gateway API objects report Accepted/Programmed,
# never Ready, so provider-kubernetes' default (DeriveFromObject: a Ready condition) never holds.
ACCEPTED_CEL = ("has(object.status.conditions) && "
                "object.status.conditions.exists(c, c.type == 'Accepted' && c.status == 'True')")
PROGRAMMED_CEL = ("has(object.status.conditions) && "
                  "object.status.conditions.exists(c, c.type == 'Programmed' && c.status == 'True')")


def gateway_class(lbls: Mapping[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": GATEWAY_CLASS}
    if lbls:
        meta["labels"] = dict(sorted(lbls.items()))
    return {"apiVersion": API, "kind": "GatewayClass", "metadata": meta,
            "spec": {"controllerName": ENVOY_CONTROLLER}}


def gateway(lbls: Mapping[str, str] | None = None, class_name: str = "") -> dict[str, Any]:
    """The ``modelplane`` Gateway: one HTTP listener on port 80 open to all namespaces.

    ``class_name``: a GatewayClass the platform team brought (empty: Modelplane's own)."""
    meta: dict[str, Any] = {"name": GATEWAY_NAME, "namespace": NAMESPACE}
    if lbls:
        meta["labels"] = dict(sorted(lbls.items()))
    listener = {"name": "http", "protocol": "HTTP", "port": 80,
                "allowedRoutes": {"namespaces": {"from": "All"}}}
    return {"apiVersion": API, "kind": "Gateway", "metadata": meta,
            "spec": {"gatewayClassName": class_name or GATEWAY_CLASS, "listeners": [listener]}}


def address(gateway_status: Mapping[str, Any] | None) -> str:
    """The first address a Gateway reports ('' until it has one)."""
    for entry in (gateway_status or {}).get("addresses") or []:
        if entry.get("value"):
            return str(entry["value"])
    return ""


def ref() -> dict[str, str]:
    """status.gateway: where routes attach."""
    return {"name": GATEWAY_NAME, "namespace": NAMESPACE}
