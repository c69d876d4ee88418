"""Builders for compose-model-service: a ModelService, the InferenceGateway and
the ModelEndpoints it selects."""
from __future__ import annotations

from typing import Any

FN = "compose-model-service"
NAME, NS = "search", "ml-team"
ROUTE = f"{NAME}-route"


def service(*entries: tuple[dict, int | None]) -> dict:
    eps = []
    for labels, weight in entries or (({"modelplane.ai/deployment": "qwen3-8b"}, None),):
        e: dict[str, Any] = {"selector": {"matchLabels": labels}}
        if weight is not None:
            e["weight"] = weight
        eps.append(e)
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelService",
            "metadata": {"name": NAME, "namespace": NS}, "spec": {"endpoints": eps}}


def gateway(address: str | None = "203.0.113.1") -> dict:
    st: dict[str, Any] = {"gateway": {"name": "modelplane", "namespace": "modelplane-system"}}
    if address:
        st["address"] = address
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceGateway",
            "metadata": {"name": "default"}, "spec": {}, "status": st}


def endpoint(name: str, rewrite: str | None = None, routed: bool = True, credential: bool = False,
             ns: str = NS) -> dict:
    routing = {"backendName": f"{name}-backend"} if routed else {}
    if credential:
        routing["credentialFilterName"] = f"{name}-credential"
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelEndpoint",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"url": "http://203.0.113.10", "rewritePath": rewrite or f"/{ns}/{name}/"},
            "status": {"routing": routing}}
