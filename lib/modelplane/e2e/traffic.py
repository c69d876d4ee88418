"""Which ModelServices the lab's data plane can answer, and one request to each (the e2e's check
that real Crossplane composes routes that work).

A ModelService answers through the InferenceGateway (hop 1, the control plane) and each hosting
cluster's gateway (hop 2). The lab's gateways are Traefik, which serves the standard Gateway API
kinds and no others, so a service is sent a request only when every endpoint it routes to is one
the lab can reach:

- an in-fleet endpoint (a ModelEndpoint a ModelReplica composed: labels deployment, replica and
  cluster) whose cluster route sends to core ``Service`` backends. A prefill/decode replica's
  route sends to an ``InferencePool`` (the Inference Extension's endpoint picker), which Traefik
  does not implement: not sent;
- an external provider (a hand-written ModelEndpoint, e.g. ``search``'s Together) routes through
  Envoy Gateway's ``Backend``, which Traefik does not serve and whose address is outside the lab:
  a service mixing one in would answer part of its requests with an error, so it is not sent.

``unanswerable`` says why not (``""``: send), from the objects alone; ``request`` sends one HTTP
request to an address of the lab's network (``in_lab``) and nothing else.
"""
from __future__ import annotations

import http.client
import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from modelplane.lab import in_lab
from modelplane.mockengine.server import HEADER as ANSWERED_BY

DEPLOYMENT, REPLICA, CLUSTER = "modelplane.ai/deployment", "modelplane.ai/replica", "modelplane.ai/cluster"
TIMEOUT = 10.0


def replica_of(endpoint: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(deployment, replica, cluster) of an in-fleet ModelEndpoint; None for an external provider."""
    labels = (endpoint.get("metadata") or {}).get("labels") or {}
    if all(k in labels for k in (DEPLOYMENT, REPLICA, CLUSTER)):
        return labels[DEPLOYMENT], labels[REPLICA], labels[CLUSTER]
    return None


def backend_kinds(route: Mapping[str, Any]) -> set[str]:
    """Every backendRef kind of an HTTPRoute (``Service`` when a ref names none, as Gateway API defaults)."""
    return {f"{ref.get('group') or ''}/{ref.get('kind') or 'Service'}".lstrip("/")
            for rule in (route.get("spec") or {}).get("rules") or [] for ref in rule.get("backendRefs") or []}


def unanswerable(service: Mapping[str, Any], endpoints: Sequence[Mapping[str, Any]],
                 cluster_routes: Mapping[str, Mapping[str, Any] | None]) -> str:
    """Why the lab cannot answer ``service``, every reason joined by "; " ("" when it can).
    ``endpoints``: the ModelEndpoints its status routes to; ``cluster_routes``: cluster -> the
    service's HTTPRoute there (None: missing)."""
    name = "/".join(filter(None, ((service.get("metadata") or {}).get(k) for k in ("namespace", "name"))))
    if not endpoints:
        return f"{name} routes to no endpoint"
    why = []
    external = sorted(e["metadata"]["name"] for e in endpoints if replica_of(e) is None)
    if external:
        why.append(f"{name} mixes in external provider endpoint(s) {', '.join(external)} (Envoy Gateway's "
                   "Backend, outside the lab's network): some of its requests would go there")
    for cluster in sorted({r[2] for e in endpoints if (r := replica_of(e))}):
        route = cluster_routes.get(cluster)
        if route is None:
            why.append(f"{name} has no HTTPRoute on cluster {cluster}")
            continue
        kinds = backend_kinds(route) - {"Service"}
        if kinds:
            why.append(f"{name}'s route on {cluster} sends to {', '.join(sorted(kinds))} (an endpoint picker the "
                       "lab's Traefik does not implement)")
    return "; ".join(why)


def request(url: str, body: Mapping[str, Any] | None = None, timeout: float = TIMEOUT) -> tuple[int, dict, Any]:
    """GET (no body) or POST JSON ``url``: (status, who answered as a dict, the decoded JSON body or text)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not in_lab(host):
        raise ValueError(f"{url}: {host or 'no host'} is outside the lab's network; only lab addresses are asked")
    conn = http.client.HTTPConnection(host, parts.port or 80, timeout=timeout)
    try:
        if body is None:
            conn.request("GET", parts.path)
        else:
            conn.request("POST", parts.path, json.dumps(body), {"Content-Type": "application/json"})
        rsp = conn.getresponse()
        raw = rsp.read().decode(errors="replace")
        who = dict(p.split("=", 1) for p in (rsp.getheader(ANSWERED_BY) or "").split(",") if "=" in p)
    finally:
        conn.close()
    try:
        return rsp.status, who, json.loads(raw)
    except ValueError:
        return rsp.status, who, raw
