"""ModelReplicas and ModelEndpoints from a schedule, and which children stay.

Composition-resource-names carry the index and the cluster
(``replica-<index>-<cluster>``, ``endpoint-<index>-<cluster>``), like the
objects' own names (``naming.replica_name``): moving a replica is then a
delete and a create, never a rename Crossplane cannot do.

Per placement:

- New, Kept or Moved: the ModelReplica is (re)built from the deployment
  (engines copied, members' pools and devices resolved, templates verbatim)
  and the placement; its ModelEndpoint is built from the observed replica's
  published ``status.url``/``rewritePath``. Until those exist a NEW
  endpoint is withheld and an EXISTING one kept as it is.
- Held (its cluster or class is not observed yet): the observed replica and
  endpoint are kept untouched (the runtime seeded them).

An index the scheduler could not place keeps whatever was observed for it
(nothing is deleted until a replacement exists). Every other observed
replica or endpoint (scaled down, moved away) is dropped.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane import labels as L
from modelplane.function import is_ready
from modelplane.naming import cache_pvc_name, replica_name
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

from .inputs import CacheView, ClusterInfo

API = "modelplane.ai/v1alpha1"
_CHILD = re.compile(r"^(replica|endpoint)-(\d+)-(.+)$")


def replica_resource(index: int, cluster: str) -> str:
    return f"replica-{index}-{cluster}"


def endpoint_resource(index: int, cluster: str) -> str:
    return f"endpoint-{index}-{cluster}"


def child_index(resource: str) -> int | None:
    """The replica index of one of our composition-resource-names (None: not ours)."""
    m = _CHILD.match(resource)
    return int(m.group(2)) if m else None


def replica_labels(user: Mapping[str, str] | None, deployment: str, cluster: str, index: int) -> dict[str, str]:
    return L.merged(user, {L.DEPLOYMENT: deployment, L.CLUSTER: cluster, L.REPLICA: str(index)})


def replica_ready(observed: Mapping[str, Any] | None) -> bool:
    """A ModelReplica is ready when it says so (status.ready) or is Ready."""
    if not observed:
        return False
    return (observed.get("status") or {}).get("ready") is True or is_ready(observed)


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


def model_replica(dep: Deployment, raw_spec: Mapping[str, Any], user_labels: Mapping[str, str] | None,
                  placement: Placement, info: ClusterInfo, cache: CacheView | None) -> dict:
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
    spec["engines"] = engines_spec(dep, list(raw_spec.get("engines") or []), placement)
    spec["placement"] = placement_dicts(placement)
    return {
        "apiVersion": API,
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": dep.namespace,
                     "labels": replica_labels(user_labels, dep.name, placement.cluster, placement.index)},
        "spec": spec,
    }


def model_endpoint(name: str, namespace: str, labels: Mapping[str, str], url: str, rewrite_path: str) -> dict:
    return {
        "apiVersion": API,
        "kind": "ModelEndpoint",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"url": url, "rewritePath": rewrite_path or "/", "api": "OpenAI"},
    }


@dataclass
class Children:
    desired: dict[str, tuple[dict, bool | None]] = field(default_factory=dict)  # name -> (object, ready)
    kept: set[str] = field(default_factory=set)  # observed children left as seeded
    drop: list[str] = field(default_factory=list)
    withheld: list[int] = field(default_factory=list)  # indexes whose endpoint waits for a URL


def children(dep: Deployment, raw_spec: Mapping[str, Any], user_labels: Mapping[str, str] | None,
             sched: Schedule, infos: Mapping[str, ClusterInfo], cache: CacheView | None,
             observed: Mapping[str, Mapping[str, Any]]) -> Children:
    out = Children()
    for p in sched.placements:
        rname, ename = replica_resource(p.index, p.cluster), endpoint_resource(p.index, p.cluster)
        seen = observed.get(rname)
        info = infos.get(p.cluster)
        if p.state == HELD or info is None:
            out.kept |= {n for n in (rname, ename) if n in observed}
            continue
        replica = model_replica(dep, raw_spec, user_labels, p, info, cache)
        out.desired[rname] = (replica, replica_ready(seen))
        published = (seen or {}).get("status") or {}
        if published.get("url"):
            meta = replica["metadata"]
            out.desired[ename] = (model_endpoint(meta["name"], dep.namespace, meta["labels"], published["url"],
                                                 published.get("rewritePath") or "/"), None)
        elif ename in observed:
            out.kept.add(ename)
        else:
            out.withheld.append(p.index)
    unplaced = {u.index for u in sched.unplaced}
    for name in sorted(observed):
        index = child_index(name)
        if index is None or name in out.desired or name in out.kept:
            continue
        if index in unplaced:
            out.kept.add(name)
        else:
            out.drop.append(name)
    return out
