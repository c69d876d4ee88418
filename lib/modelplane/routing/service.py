"""The ModelService HTTPRoute: one prefix, weighted backends, exact shares.

Weights: entry i (weight w_i) matches n_i routed endpoints. Every endpoint of
entry i gets w_i * L / n_i with L = lcm(n_1..n_k), so no share is rounded and
no endpoint of a non-zero entry drops to 0; all weights are then divided by
their gcd. An endpoint selected by several entries gets the sum. Gateway API
caps a weight at 1,000,000; beyond that weights are scaled down and rounded,
never below 1.

Rewrites: Envoy Gateway applies path rewrites per rule, not per backendRef
(a backendRef URLRewrite path is rejected or ignored), and a weighted split
needs all backends in one rule. So: when every selected endpoint has the same
rewritePath, the rule rewrites the service prefix to it. Otherwise the rule
rewrites to "/" and each backendRef whose endpoint's rewritePath is not "/"
sets header ``x-modelplane-prefix: <rewritePath>``; a ModelReplica's route
on its cluster answers that header at ``/`` (lib/workloads/replica.py). That
covers in-fleet replicas and external endpoints served at "/"; an external
endpoint with another base path must not be mixed with them.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ROUTE_API = "gateway.networking.k8s.io/v1"
BACKEND_GROUP = "gateway.envoyproxy.io"
PREFIX_HEADER = "x-modelplane-prefix"
MAX_WEIGHT = 1_000_000


@dataclass(frozen=True)
class Endpoint:
    """A routed ModelEndpoint as the route needs it."""

    name: str
    backend: str
    rewrite_path: str = "/"
    credential_filter: str | None = None


@dataclass
class Selection:
    """What a ModelService's selectors found: routable endpoints and what to tell the user."""

    endpoints: dict[str, Endpoint]
    groups: list[tuple[int, list[str]]]   # per spec.endpoints[i]: (weight, endpoint names)
    no_match: list[str]
    unrouted: list[str]


def select(entries: Sequence[Mapping[str, Any]], fetched: Sequence[Sequence[Mapping[str, Any]]],
           namespace: str) -> Selection:
    """Pair each spec.endpoints[i] with the ModelEndpoints fetched for it.

    Only endpoints of ``namespace`` count (tenancy, even if a lookup strayed);
    an endpoint without ``status.routing.backendName`` is not routable yet.
    """
    out = Selection({}, [], [], [])
    for i, (entry, items) in enumerate(zip(entries, fetched)):
        names = []
        for item in sorted(items, key=lambda o: (o.get("metadata") or {}).get("name", "")):
            meta = item.get("metadata") or {}
            # The API server never hands over a nameless object; a corrupted request may.
            if meta.get("namespace", namespace) != namespace or not meta.get("name"):
                continue
            routing = (item.get("status") or {}).get("routing") or {}
            name = meta["name"]
            if not routing.get("backendName"):
                out.unrouted.append(f"ModelEndpoint {name} is not routed yet (no status.routing.backendName)")
                continue
            out.endpoints[name] = Endpoint(name, routing["backendName"],
                                           (item.get("spec") or {}).get("rewritePath") or "/",
                                           routing.get("credentialFilterName"))
            names.append(name)
        if not items:
            labels = ((entry.get("selector") or {}).get("matchLabels") or {})
            sel = ", ".join(f"{k}: {v}" for k, v in sorted(labels.items()))
            out.no_match.append(f"spec.endpoints[{i}] {{{sel}}} matches no ModelEndpoint in {namespace}")
        weight = entry.get("weight")
        out.groups.append((1 if weight is None else weight, names))
    return out


def split_weights(groups: Sequence[tuple[int, Sequence[str]]]) -> dict[str, int]:
    """Exact integer weights per endpoint name from (weight, matched names) entries."""
    sizes = [len(names) for _, names in groups if names]
    if not sizes:
        return {}
    lcm = math.lcm(*sizes)
    out: dict[str, int] = {}
    for weight, names in groups:
        for n in names:
            out[n] = out.get(n, 0) + weight * lcm // len(names)
    nonzero = [w for w in out.values() if w]
    if nonzero:
        g = math.gcd(*nonzero)
        out = {k: v // g for k, v in out.items()}
        top = max(out.values())
        if top > MAX_WEIGHT:
            out = {k: (max(1, round(v * MAX_WEIGHT / top)) if v else 0) for k, v in out.items()}
    return dict(sorted(out.items()))


def route(name: str, namespace: str, gateway: Mapping[str, str], endpoints: Sequence[Endpoint],
          weights: Mapping[str, int], labels: Mapping[str, str]) -> dict:
    """The ModelService HTTPRoute on the InferenceGateway's Gateway."""
    prefix = f"/{namespace}/{name}/"
    paths = {e.rewrite_path for e in endpoints}
    common = paths.pop() if len(paths) == 1 else None
    refs = []
    for e in sorted(endpoints, key=lambda e: e.name):
        ref: dict[str, Any] = {"group": BACKEND_GROUP, "kind": "Backend", "name": e.backend,
                               "weight": weights.get(e.name, 0)}
        filters = []
        if common is None and e.rewrite_path != "/":
            filters.append({"type": "RequestHeaderModifier", "requestHeaderModifier": {
                "set": [{"name": PREFIX_HEADER, "value": e.rewrite_path}]}})
        if e.credential_filter:
            filters.append({"type": "ExtensionRef", "extensionRef": {
                "group": BACKEND_GROUP, "kind": "HTTPRouteFilter", "name": e.credential_filter}})
        if filters:
            ref["filters"] = filters
        refs.append(ref)
    rule: dict[str, Any] = {
        "matches": [{"path": {"type": "PathPrefix", "value": prefix}}],
        "filters": [{"type": "URLRewrite", "urlRewrite": {
            "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": common or "/"}}}],
    }
    if refs:  # no backends: Envoy Gateway answers 500 until one is routed
        rule["backendRefs"] = refs
    return {
        "apiVersion": ROUTE_API,
        "kind": "HTTPRoute",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"parentRefs": [{"name": gateway["name"], "namespace": gateway["namespace"]}],
                 "rules": [rule]},
    }
