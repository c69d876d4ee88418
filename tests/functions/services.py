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
             ns: str = NS, cluster: str | None = "prod-a", refs: list[dict] | None = None) -> dict:
    """An in-fleet replica's ModelEndpoint on ``cluster`` (as compose-model-deployment writes it), or,
    with ``cluster=None``, an external provider's behind an Envoy Gateway Backend."""
    spec: dict[str, Any] = {"url": "http://203.0.113.10", "rewritePath": rewrite or "/"}
    if cluster is None:
        ref = {"group": "gateway.envoyproxy.io", "kind": "Backend", "name": f"{name}-backend"}
        spec["url"] = "https://api.example.com"
    else:
        ref = {"group": "", "kind": "Service", "name": f"{name}-backend", "port": 80}
        spec["replica"] = {"name": name, "cluster": cluster, "providerConfigName": cluster,
                           "gateway": {"name": "modelplane", "namespace": "modelplane-system"},
                           "backendRefs": refs if refs is not None else [
                               {"group": "", "kind": "Service", "name": f"{name}-engine", "port": 8000}]}
    routing: dict[str, Any] = {"backendName": f"{name}-backend", "backendRef": ref} if routed else {}
    if credential:
        routing["credentialFilterName"] = f"{name}-credential"
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelEndpoint",
            "metadata": {"name": name, "namespace": ns}, "spec": spec, "status": {"routing": routing}}
