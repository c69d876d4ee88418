"""This deployment's observed children, paired: each ModelReplica with its
ModelEndpoint, and what the scheduler and the rollout need to know of it.

Composition-resource-names carry the index and the cluster
(``replica-<index>-<cluster>``, ``endpoint-<index>-<cluster>``), like the
objects' own names (``naming.replica_name``): moving a replica is a delete
and a create, never a rename Crossplane cannot do.

State that must survive between calls lives on the ModelReplica itself, as
annotations Modelplane owns:

- ``modelplane.ai/draining: "<Cause>: <reason>"``: the replica is on its
  way out (``drain.py``). Once set it is never taken back.
- ``modelplane.ai/replaced: <RFC 3339>``: failover replaced this replica
  while its cluster was down since that time.
- ``modelplane.ai/unrouted: <RFC 3339>``: a draining replica was first seen
  in no ModelService route at that time; its drain period runs from there.

A ModelEndpoint Modelplane keeps but takes out of routing (its replica is
draining, or its cluster is not Ready) carries
``modelplane.ai/out-of-routing: <why>``; ModelServices leave it out.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane import labels as L
from modelplane.pipeline.composition import is_ready
from modelplane.scheduler import Current, PodGroup, PoolPlacement

REPLICA_KIND = "ModelReplica"
ENDPOINT_KIND = "ModelEndpoint"
DRAINING = L.PREFIX + "draining"
REPLACED = L.PREFIX + "replaced"
UNROUTED = L.PREFIX + "unrouted"
OUT_OF_ROUTING = L.OUT_OF_ROUTING
_CHILD = re.compile(r"^(replica|endpoint)-(\d+)-(.+)$")


def replica_resource(index: int, cluster: str) -> str:
    return f"replica-{index}-{cluster}"


def endpoint_resource(index: int, cluster: str) -> str:
    return f"endpoint-{index}-{cluster}"


def child_index(resource: str) -> int | None:
    """The replica index of one of our composition-resource-names (None: not ours)."""
    m = _CHILD.match(resource)
    return int(m.group(2)) if m else None


def replica_ready(observed: Mapping[str, Any] | None) -> bool:
    """A ModelReplica is ready when it says so (status.ready) or is Ready."""
    if not observed:
        return False
    return (observed.get("status") or {}).get("ready") is True or is_ready(observed)


def endpoint_routed(observed: Mapping[str, Any] | None) -> bool:
    """A ModelEndpoint a ModelService can route to: its Backend is published."""
    return bool((((observed or {}).get("status") or {}).get("routing") or {}).get("backendName"))


@dataclass(frozen=True)
class Child:
    """One observed ModelReplica and its ModelEndpoint."""

    index: int
    cluster: str
    name: str  # metadata.name of the ModelReplica (and its endpoint)
    obj: Mapping[str, Any]  # the observed ModelReplica
    endpoint: Mapping[str, Any] | None  # the observed ModelEndpoint, if any
    revision: str = ""  # label modelplane.ai/revision ("" on replicas composed before revisions)
    draining: str = ""  # annotation modelplane.ai/draining
    replaced: str = ""  # annotation modelplane.ai/replaced
    unrouted: str = ""  # annotation modelplane.ai/unrouted

    @property
    def key(self) -> tuple[int, str]:
        return self.index, self.cluster

    @property
    def replica_resource(self) -> str:
        return replica_resource(self.index, self.cluster)

    @property
    def endpoint_resource(self) -> str:
        return endpoint_resource(self.index, self.cluster)

    @property
    def ready(self) -> bool:
        return replica_ready(self.obj)

    @property
    def routed(self) -> bool:
        """In routing: its endpoint is composed."""
        return self.endpoint is not None

    @property
    def available(self) -> bool:
        """Serving traffic: Ready and its endpoint routable."""
        return self.ready and endpoint_routed(self.endpoint)

    def current(self, extra: bool = False) -> Current:
        """The scheduler's view: member pools, admission key, observed pods."""
        spec = self.obj.get("spec") or {}
        pools = tuple(m.get("pool", "") for e in spec.get("engines") or [] for m in e.get("members") or [])
        return Current(index=self.index, cluster=self.cluster, pools=pools, order=spec.get("order") or "",
                       pods=placement(spec.get("placement") or []), extra=extra, replaced=self.replaced)


def placement(entries: list[Mapping[str, Any]]) -> tuple[PoolPlacement, ...]:
    """``spec.placement`` as the scheduler's pool placements."""
    out = []
    for e in entries:
        groups = tuple(PodGroup(count=int(g.get("count", 0)),
                                devices={k: int(v) for k, v in sorted((g.get("devices") or {}).items())},
                                gang=bool(g.get("gang", False)))
                       for g in e.get("pods") or [])
        out.append(PoolPlacement(str(e.get("pool", "")), groups))
    return tuple(out)


@dataclass(frozen=True)
class Children:
    replicas: tuple[Child, ...]  # sorted by (index, cluster)
    orphans: tuple[str, ...]  # endpoint resources without their replica

    def live(self, namespace: str) -> frozenset[str]:
        """``namespace/name`` of every observed ModelReplica."""
        return frozenset(f"{namespace}/{c.name}" for c in self.replicas)


def read(observed: Mapping[str, Mapping[str, Any]]) -> Children:
    """Pair observed ModelReplicas with their ModelEndpoints by resource name."""
    replicas = []
    endpoints = []
    for name, obj in observed.items():
        m = _CHILD.match(name)
        if not m:
            continue
        if m.group(1) == "endpoint":
            endpoints.append(name)
            continue
        spec = obj.get("spec") or {}
        cluster = (spec.get("cluster") or {}).get("name")
        if obj.get("kind") != REPLICA_KIND or cluster is None or not isinstance(spec.get("index"), int):
            continue
        meta = obj.get("metadata") or {}
        notes = meta.get("annotations") or {}
        index = spec["index"]
        replicas.append(Child(
            index=index, cluster=cluster, name=meta.get("name", ""), obj=obj,
            endpoint=observed.get(endpoint_resource(index, cluster)),
            revision=(meta.get("labels") or {}).get(L.REVISION, ""),
            draining=str(notes.get(DRAINING) or ""), replaced=str(notes.get(REPLACED) or ""),
            unrouted=str(notes.get(UNROUTED) or ""),
        ))
    have = {c.endpoint_resource for c in replicas}
    orphans = tuple(sorted(n for n in endpoints if n not in have))
    return Children(tuple(sorted(replicas, key=lambda c: c.key)), orphans)


def backends(child: Child) -> frozenset[str]:
    """Names a route may carry this replica by: its endpoint's backend, its own backends on its cluster."""
    out = set()
    routing = (((child.endpoint or {}).get("status") or {}).get("routing") or {})
    if routing.get("backendName"):
        out.add(str(routing["backendName"]))
    for ref in ((child.obj.get("status") or {}).get("backendRefs") or []):
        if isinstance(ref, Mapping) and ref.get("name"):
            out.add(str(ref["name"]))
    return frozenset(out)
