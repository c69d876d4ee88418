"""The ModelService's routes: one prefix, weighted backends, exact shares, two hops.

Weights: entry i (weight w_i) matches n_i routed endpoints. Every endpoint of
entry i gets w_i * L / n_i with L = lcm(n_1..n_k), so no share is rounded and
no endpoint of a non-zero entry drops to 0; all weights are then divided by
their gcd. An endpoint selected by several entries gets the sum. Gateway API
caps a weight at 1,000,000; beyond that weights are scaled down and rounded,
never below 1.

Two hops, standard Gateway API only (docs: "Routing"): a route rewrites a
path per rule, and a per-backendRef filter is an Extended feature no major
implementation claims in its conformance report, so no route relies on one.

1. Control plane (``route``): ``/<namespace>/<name>/`` is rewritten to the
   endpoints' common rewritePath and tagged with the header
   ``x-modelplane-service: <namespace>/<name>`` (a rule-level filter, Core);
   each endpoint is one weighted backend: an in-fleet replica's is its
   cluster gateway (a Service with an EndpointSlice).
2. Each cluster hosting selected replicas (``cluster_routes``): a route on
   its gateway matches that header and splits among the replicas it hosts,
   with the same shares, so every replica gets its share overall.

Endpoints whose rewritePath differs cannot share one rule: the path with the
largest share is routed, the others are named in the condition.

Both hops carry the service's ``spec.timeouts.request`` (``timeouts.py`` says why a
route without one cuts answers at 15 s), so the inner hop never ends an answer the
outer one would let finish.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane.labels import OUT_OF_ROUTING

from .timeouts import rule_timeouts

ROUTE_API = "gateway.networking.k8s.io/v1"
BACKEND_GROUP = "gateway.envoyproxy.io"
SERVICE_HEADER = "x-modelplane-service"
MAX_WEIGHT = 1_000_000


@dataclass(frozen=True)
class Replica:
    """Where an in-fleet endpoint's replica serves (ModelEndpoint spec.replica)."""

    name: str
    cluster: str
    provider_config: str
    gateway: tuple[str, str]                       # (name, namespace)
    backend_refs: tuple[tuple[tuple[str, Any], ...], ...] = ()

    def refs(self) -> list[dict]:
        return [dict(r) for r in self.backend_refs]


@dataclass(frozen=True)
class Endpoint:
    """A routed ModelEndpoint as the routes need it."""

    name: str
    backend: str
    rewrite_path: str = "/"
    credential_filter: str | None = None
    ref: tuple[tuple[str, Any], ...] = ()         # the control-plane backendRef (sorted items)
    replica: Replica | None = None

    def backend_ref(self) -> dict:
        if self.ref:
            return dict(self.ref)
        return {"group": BACKEND_GROUP, "kind": "Backend", "name": self.backend}


@dataclass
class Selection:
    """What a ModelService's selectors found: routable endpoints and what to tell the user."""

    endpoints: dict[str, Endpoint]
    groups: list[tuple[int, list[str]]]   # per spec.endpoints[i]: (weight, endpoint names)
    no_match: list[str]
    unrouted: list[str]
    conflicts: list[str] = field(default_factory=list)
    leaving: list[str] = field(default_factory=list)   # endpoints Modelplane took out of routing


def _frozen(d: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, v) for k, v in d.items() if v is not None))


def _replica(spec: Mapping[str, Any]) -> Replica | None:
    rep = spec.get("replica")
    if not isinstance(rep, Mapping):
        return None
    gw = rep.get("gateway") or {}
    refs = tuple(_frozen(r) for r in rep.get("backendRefs") or [] if isinstance(r, Mapping) and r.get("name"))
    return Replica(str(rep.get("name") or ""), str(rep.get("cluster") or ""),
                   str(rep.get("providerConfigName") or ""),
                   (str(gw.get("name") or ""), str(gw.get("namespace") or "")), refs)


def _unroutable_replica(rep: Replica) -> str:
    if not rep.provider_config or not rep.cluster:
        return "names no cluster (spec.replica.cluster/providerConfigName)"
    if not all(rep.gateway):
        return f"names no gateway on cluster {rep.cluster} (spec.replica.gateway)"
    if not rep.backend_refs:
        return f"has no backends on cluster {rep.cluster} yet (spec.replica.backendRefs)"
    return ""


def select(entries: Sequence[Mapping[str, Any]], fetched: Sequence[Sequence[Mapping[str, Any]]],
           namespace: str) -> Selection:
    """Pair each spec.endpoints[i] with the ModelEndpoints fetched for it.

    Only endpoints of ``namespace`` count (tenancy, even if a lookup strayed);
    an endpoint without ``status.routing.backendName`` is not routable yet,
    nor is an in-fleet one whose replica has not published its backends.
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
            spec = item.get("spec") or {}
            name = meta["name"]
            if (meta.get("annotations") or {}).get(OUT_OF_ROUTING):
                out.leaving.append(name)   # its replica drains or its cluster is down: not a fault
                continue
            if not routing.get("backendName"):
                out.unrouted.append(f"ModelEndpoint {name} is not routed yet (no status.routing.backendName)")
                continue
            replica = _replica(spec)
            if replica is not None and (why := _unroutable_replica(replica)):
                out.unrouted.append(f"ModelEndpoint {name} {why}")
                continue
            ref = routing.get("backendRef")
            out.endpoints[name] = Endpoint(name, routing["backendName"], spec.get("rewritePath") or "/",
                                           routing.get("credentialFilterName"),
                                           _frozen(ref) if isinstance(ref, Mapping) and ref.get("name") else (),
                                           replica)
            names.append(name)
        if not items:
            labels = ((entry.get("selector") or {}).get("matchLabels") or {})
            sel = ", ".join(f"{k}: {v}" for k, v in sorted(labels.items()))
            out.no_match.append(f"spec.endpoints[{i}] {{{sel}}} matches no ModelEndpoint in {namespace}")
        weight = entry.get("weight")
        out.groups.append((1 if weight is None else weight, names))
    return out


def one_path(sel: Selection, weights: Mapping[str, int]) -> tuple[dict[str, Endpoint], list[str]]:
    """The endpoints that share the rewritePath with the largest share, and why the others are left out."""
    by_path: dict[str, list[Endpoint]] = {}
    for e in sel.endpoints.values():
        by_path.setdefault(e.rewrite_path, []).append(e)
    if len(by_path) <= 1:
        return dict(sel.endpoints), []
    best = max(sorted(by_path), key=lambda p: (sum(weights.get(e.name, 0) for e in by_path[p]), p == "/"))
    left = [f"ModelEndpoint {e.name} (rewritePath {e.rewrite_path}) is left out: one route rewrites every "
            f"backend alike, and {best} carries the larger share; give it rewritePath {best} or serve it "
            f"from another ModelService" for p in sorted(by_path) if p != best for e in by_path[p]]
    return {e.name: e for e in by_path[best]}, left


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
    return dict(sorted(_reduce(out).items()))


def _reduce(weights: dict[Any, int]) -> dict[Any, int]:
    nonzero = [w for w in weights.values() if w]
    if not nonzero:
        return weights
    g = math.gcd(*nonzero)
    out = {k: v // g for k, v in weights.items()}
    top = max(out.values())
    if top > MAX_WEIGHT:
        out = {k: (max(1, round(v * MAX_WEIGHT / top)) if v else 0) for k, v in out.items()}
    return out


def route(name: str, namespace: str, gateway: Mapping[str, str], endpoints: Sequence[Endpoint],
          weights: Mapping[str, int], labels: Mapping[str, str], *, request_timeout: str | None = None) -> dict:
    """The ModelService HTTPRoute on the InferenceGateway's Gateway (hop 1); ``request_timeout``
    is the service's spec.timeouts.request (None: the API's default)."""
    prefix = f"/{namespace}/{name}/"
    paths = {e.rewrite_path for e in endpoints}
    common = paths.pop() if len(paths) == 1 else "/"
    refs = []
    for e in sorted(endpoints, key=lambda e: e.name):
        ref: dict[str, Any] = {**_ref(_frozen(e.backend_ref())), "weight": weights.get(e.name, 0)}
        if e.credential_filter:  # Envoy Gateway's credential injection (external providers only)
            ref["filters"] = [{"type": "ExtensionRef", "extensionRef": {
                "group": BACKEND_GROUP, "kind": "HTTPRouteFilter", "name": e.credential_filter}}]
        refs.append(ref)
    filters: list[dict[str, Any]] = [{"type": "URLRewrite", "urlRewrite": {
        "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": common}}}]
    if any(e.replica for e in endpoints):
        filters.append({"type": "RequestHeaderModifier", "requestHeaderModifier": {
            "set": [{"name": SERVICE_HEADER, "value": f"{namespace}/{name}"}]}})
    rule: dict[str, Any] = {"matches": [{"path": {"type": "PathPrefix", "value": prefix}}], "filters": filters,
                            "timeouts": rule_timeouts(request_timeout)}
    if refs:  # no backends: the gateway answers 500 until one is routed
        rule["backendRefs"] = refs
    return {
        "apiVersion": ROUTE_API,
        "kind": "HTTPRoute",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"parentRefs": [{"name": gateway["name"], "namespace": gateway["namespace"]}],
                 "rules": [rule]},
    }


@dataclass(frozen=True)
class ClusterRoute:
    """The service's route on one workload cluster (hop 2)."""

    cluster: str
    provider_config: str
    manifest: dict


def cluster_routes(name: str, namespace: str, endpoints: Sequence[Endpoint], weights: Mapping[str, int],
                   labels: Mapping[str, str], *, request_timeout: str | None = None) -> list[ClusterRoute]:
    """Per cluster hosting selected replicas: a route matching the service header, split among them.

    A replica with several backends (engines weighted by copies) gives each
    its part of the replica's share: share * w_ref * L / W_replica, with L
    the lcm of the replicas' totals, so nothing is rounded."""
    by_cluster: dict[str, list[Endpoint]] = {}
    for e in endpoints:
        if e.replica is not None:
            by_cluster.setdefault(e.replica.cluster, []).append(e)
    out = []
    for cluster, eps in sorted(by_cluster.items()):
        eps.sort(key=lambda e: e.name)
        totals = {e.name: sum(int(r.get("weight", 1) or 0) for r in e.replica.refs()) or 1 for e in eps}
        lcm = math.lcm(*totals.values())
        split: dict[tuple[tuple[str, Any], ...], int] = {}
        for e in eps:
            for r in e.replica.refs():
                key = _frozen({k: v for k, v in r.items() if k != "weight"})
                share = weights.get(e.name, 0) * int(r.get("weight", 1) or 0) * lcm // totals[e.name]
                split[key] = split.get(key, 0) + share
        split = _reduce(split)
        refs = [{**_ref(k), "weight": w} for k, w in sorted(split.items())]
        first = eps[0].replica
        manifest = {
            "apiVersion": ROUTE_API,
            "kind": "HTTPRoute",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
            "spec": {
                "parentRefs": [{"name": first.gateway[0], "namespace": first.gateway[1]}],
                "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"},
                                        "headers": [{"type": "Exact", "name": SERVICE_HEADER,
                                                     "value": f"{namespace}/{name}"}]}],
                           "backendRefs": refs, "timeouts": rule_timeouts(request_timeout)}],
            },
        }
        out.append(ClusterRoute(cluster, first.provider_config, manifest))
    return out


def _ref(key: tuple[tuple[str, Any], ...]) -> dict:
    """A backendRef as a route spells it: a Service's empty group and kind are left implicit."""
    ref = dict(key)
    if ref.get("kind", "Service") == "Service" and not ref.get("group"):
        ref.pop("group", None)
        ref.pop("kind", None)
    return ref


def routed_backends(routes: Sequence[Mapping[str, Any] | None]) -> list[str]:
    """Every backend name the observed routes carry.

    ``routes``: the observed control-plane HTTPRoute and the observed Objects
    carrying the routes on workload clusters; for those, both what was asked
    (``spec.forProvider``) and what the cluster reports (``status.atProvider``)
    count until they agree, so a replica leaves only routes that really dropped it."""
    names: set[str] = set()
    for obj in routes:
        if not obj:
            continue
        manifests = [obj]
        if obj.get("kind") == "Object":
            manifests = [((obj.get("spec") or {}).get("forProvider") or {}).get("manifest"),
                         ((obj.get("status") or {}).get("atProvider") or {}).get("manifest")]
        for m in manifests:
            for rule in ((m or {}).get("spec") or {}).get("rules") or []:
                for ref in rule.get("backendRefs") or []:
                    if isinstance(ref, Mapping) and ref.get("name"):
                        names.add(str(ref["name"]))
    return sorted(names)
