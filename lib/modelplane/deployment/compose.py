"""ModelReplicas and ModelEndpoints from a schedule, and which children stay.

Composition-resource-names and object names: ``observed.py``.

Per placement:

- New, Kept or Moved: the ModelReplica is (re)built from the deployment
  (engines copied, members' pools and devices resolved, templates verbatim)
  and the placement; its ModelEndpoint is built from the observed replica's
  published ``status.url``/``backendRefs`` and its cluster. A NEW endpoint waits until the
  replica is Ready and has published its URL, so a replica joins routing
  only once it can serve; an EXISTING endpoint is kept (updated) meanwhile.
- Held (its cluster or class is not observed yet, its cluster is not
  Ready, or its pool's class no longer satisfies its selectors): the
  observed replica and endpoint are kept untouched (the runtime seeded
  them), so a class edit rolls nothing.

Extra replicas that stay (outdated revision, replaced by failover) are kept
untouched too; a replica failover replaced is annotated
``modelplane.ai/replaced: <outage start>`` and otherwise untouched. A kept
endpoint on a cluster that is not Ready is annotated
``modelplane.ai/out-of-routing`` (requests there would fail). Every replica
that goes is drained first (``drain.py``): out of routing, kept until the
routes are observed without it and the drain period has passed, then deleted. Anything else
observed under our names (an endpoint without its replica) is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane import labels as L
from modelplane.naming import cache_pvc_name, replica_name
from modelplane.pipeline.composition import without_status
from modelplane.scheduler import (
    HELD,
    PREFILL_DECODE,
    WORKER,
    Deployment,
    Placement,
    Schedule,
    device_dicts,
    placement_dicts,
)

from .drain import DRAINING, Removal
from .inputs import CacheView, ClusterInfo
from .observed import DRAINING as DRAINING_NOTE
from .observed import (
    OUT_OF_ROUTING,
    UNROUTED,
    child_index,
    endpoint_resource,
    replica_ready,
    replica_resource,
)
from .observed import REPLACED as REPLACED_NOTE
from .observed import Children as Observed

API = "modelplane.ai/v1alpha1"


def replica_labels(user: Mapping[str, str] | None, deployment: str, cluster: str, index: int,
                   revision: str = "") -> dict[str, str]:
    reserved = {L.DEPLOYMENT: deployment, L.CLUSTER: cluster, L.REPLICA: str(index)}
    if revision:
        reserved[L.REVISION] = revision
    return L.merged(user, reserved)


def engines_spec(dep: Deployment, raw_engines: list[Mapping[str, Any]], placement: Placement) -> list[dict]:
    """The deployment's engines with each member's pool and devices resolved."""
    out = []
    flat = iter(placement.members)
    for engine, raw in zip(dep.engines, raw_engines):
        members = []
        for member, raw_member in zip(engine.members, raw.get("members") or []):
            mp = next(flat)
            members.append({
                "role": member.role,
                "nodes": member.pods if member.role == WORKER else 1,
                "pool": mp.pool,
                "devices": device_dicts(mp),
                "template": raw_member.get("template") or {},
            })
        item: dict[str, Any] = {"name": engine.name, "copies": engine.copies}
        if dep.serving_mode == PREFILL_DECODE and engine.phase:
            item["phase"] = engine.phase
        item["members"] = members
        out.append(item)
    return out


@dataclass(frozen=True)
class Template:
    """What every ModelReplica of one deployment is built from, whatever its placement."""

    dep: Deployment
    raw_spec: Mapping[str, Any]                   # the XR's spec: member templates are copied verbatim
    user_labels: Mapping[str, str] | None = None  # the XR's labels, carried onto every replica
    cache: CacheView | None = None
    revision: str = ""


@dataclass(frozen=True)
class Seen:
    """What this call observed: its own children (as read and as parsed) and their clusters."""

    observed: Mapping[str, Mapping[str, Any]]
    kids: Observed
    infos: Mapping[str, ClusterInfo]
    down: frozenset[str] = frozenset()   # observed clusters that are not Ready


@dataclass(frozen=True)
class Decided:
    """What this call decided: the schedule, the replicas that go, those failover replaced."""

    sched: Schedule
    removals: Sequence[Removal] = ()
    replaced: Mapping[tuple[int, str], str] = field(default_factory=dict)  # key -> outage start


def model_replica(t: Template, placement: Placement, info: ClusterInfo) -> dict:
    dep, cache = t.dep, t.cache
    name = replica_name(dep.name, placement.index, placement.cluster)
    cluster: dict[str, Any] = {"name": placement.cluster, "providerConfigName": info.provider_config}
    if info.gateway:
        cluster["gateway"] = dict(sorted(info.gateway.items()))
    spec: dict[str, Any] = {
        "deployment": dep.name,
        "index": placement.index,
        "order": placement.order,
        "cluster": cluster,
        "servingMode": dep.serving_mode,
    }
    if cache is not None:
        spec["modelCache"] = {"name": cache.name,
                              "pvcName": cache.pvc.get(placement.cluster) or cache_pvc_name(cache.name)}
    spec["engines"] = engines_spec(dep, list(t.raw_spec.get("engines") or []), placement)
    spec["placement"] = placement_dicts(placement)
    return {
        "apiVersion": API,
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": dep.namespace,
                     "labels": replica_labels(t.user_labels, dep.name, placement.cluster, placement.index,
                                              t.revision)},
        "spec": spec,
    }


def model_endpoint(replica: Mapping[str, Any], published: Mapping[str, Any]) -> dict:
    """The replica's ModelEndpoint: its cluster gateway's URL, and where the replica serves there.

    A ModelService reaches it in two hops (lib/routing/service.py): the
    control plane sends ``/`` to the cluster gateway with the service's
    header, and the service's route on that cluster picks among the
    replicas it hosts, so the endpoint needs no rewrite of its own."""
    meta, spec = replica["metadata"], replica["spec"]
    gateway = spec["cluster"].get("gateway") or {}
    target: dict[str, Any] = {
        "name": meta["name"], "cluster": spec["cluster"]["name"],
        "providerConfigName": spec["cluster"]["providerConfigName"],
        "gateway": {"name": gateway.get("name", ""), "namespace": gateway.get("namespace", "")},
    }
    if published.get("backendRefs"):
        target["backendRefs"] = [dict(r) for r in published["backendRefs"]]
    return {
        "apiVersion": API,
        "kind": "ModelEndpoint",
        "metadata": {"name": meta["name"], "namespace": meta["namespace"], "labels": dict(meta["labels"])},
        "spec": {"url": published["url"], "rewritePath": "/", "api": "OpenAI", "replica": target},
    }


@dataclass
class Children:
    desired: dict[str, tuple[dict, bool | None]] = field(default_factory=dict)  # name -> (object, ready)
    kept: set[str] = field(default_factory=set)  # observed children left as seeded
    drop: list[str] = field(default_factory=list)
    withheld: list[int] = field(default_factory=list)  # indexes whose endpoint waits for a Ready replica


def children(t: Template, seen: Seen, decided: Decided) -> Children:
    """Which children to desire (rebuilt, or observed with annotations), keep as seeded and drop.

    Replicas failover replaced (``decided.replaced``) are annotated as such; kept endpoints on
    clusters that are down (``seen.down``) leave routing."""
    out = Children()
    observed, infos, down, replaced = seen.observed, seen.infos, seen.down, decided.replaced
    by_key = {c.key: c for c in seen.kids.replicas}
    for p in decided.sched.placements:
        rname, ename = replica_resource(p.index, p.cluster), endpoint_resource(p.index, p.cluster)
        seen = by_key.get((p.index, p.cluster))
        info = infos.get(p.cluster)
        if p.state == HELD or info is None:
            out.kept |= {n for n in (rname, ename) if n in observed}
            _out_of_routing_if_down(out, observed, ename, p.cluster, down)
            continue
        replica = model_replica(t, p, info)
        ready = replica_ready(seen.obj if seen else None)
        out.desired[rname] = (replica, ready)
        published = ((seen.obj if seen else None) or {}).get("status") or {}
        if ename in observed or (ready and published.get("url")):
            if published.get("url"):
                out.desired[ename] = (model_endpoint(replica, published), None)
            else:
                out.kept.add(ename)
        else:
            out.withheld.append(p.index)
    for p in decided.sched.extras:
        key = (p.index, p.cluster)
        out.kept |= {n for n in (replica_resource(*key), endpoint_resource(*key)) if n in observed}
        _out_of_routing_if_down(out, observed, endpoint_resource(*key), p.cluster, down)
        child = by_key.get(key)
        if child is not None and key in replaced and child.replaced != replaced[key]:
            obj = _annotated(child.obj, {REPLACED_NOTE: replaced[key]})
            out.desired[child.replica_resource] = (obj, child.ready)
            out.kept.discard(child.replica_resource)
    for r in decided.removals:
        out.kept -= {r.child.replica_resource, r.child.endpoint_resource}
        out.desired.pop(r.child.endpoint_resource, None)
        if r.phase == DRAINING:
            notes = {DRAINING_NOTE: r.note, **({UNROUTED: r.unrouted} if r.unrouted else {})}
            out.desired[r.child.replica_resource] = (_annotated(r.child.obj, notes), r.child.ready)
            if r.carried and r.child.endpoint is not None:
                # Kept while a route may name its Service, but every ModelService leaves it out.
                out.desired[r.child.endpoint_resource] = (
                    _annotated(r.child.endpoint, {OUT_OF_ROUTING: f"draining: {r.note}"}), None)
    for name in sorted(observed):
        if child_index(name) is not None and name not in out.desired and name not in out.kept:
            out.drop.append(name)
    return out


def _annotated(observed: Mapping[str, Any], notes: Mapping[str, str]) -> dict:
    """An observed child as desired, untouched but for its annotations."""
    obj = without_status(observed)
    meta = obj["metadata"]
    meta["annotations"] = {**(meta.get("annotations") or {}), **notes}
    return obj


def _out_of_routing_if_down(out: Children, observed: Mapping[str, Mapping[str, Any]], ename: str, cluster: str,
                            down: frozenset[str]) -> None:
    """A kept endpoint on a cluster that is not Ready leaves routing (it comes back when rebuilt)."""
    if cluster in down and ename in observed:
        out.kept.discard(ename)
        out.desired[ename] = (_annotated(observed[ename], {OUT_OF_ROUTING: f"cluster {cluster} is not Ready"}),
                              None)
