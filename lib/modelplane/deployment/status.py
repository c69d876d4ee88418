"""A ModelDeployment's status: replica counts, placements, removals, Scheduled.

Shapes are in docs/contracts.md. ``placements`` lists every replica that
stays, of the current revision (placed by this call) and extra ones (an
older revision still serving, or held on a failed cluster), each with its
revision; ``ready`` counts those whose ModelReplica is ready, ``updated``
those of the current revision. The deployment is Ready when at least
``spec.replicas`` replicas are ready, whatever their revision, so a rolling
update with ``maxUnavailable: 0`` never makes it unready. ``removals``
lists the replicas on their way out (drained, then deleted).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane import conditions as C
from modelplane import labels as L
from modelplane.naming import replica_name
from modelplane.scheduler import Schedule, member_dicts

from .drain import Removal
from .observed import Child, replica_ready, replica_resource

# Status fields this function owns; re-published unchanged while waiting.
FIELDS = ("replicas", "selector", "placements", "removals", "revision", "observedGeneration")


@dataclass(frozen=True)
class Scheduled:
    status: bool
    reason: str
    message: str


def _observed_members(child: Child) -> list[dict]:
    spec = child.obj.get("spec") or {}
    return [{"engine": e.get("name", ""), "role": m.get("role", ""), "pool": m.get("pool", "")}
            for e in spec.get("engines") or [] for m in e.get("members") or []]


@dataclass(frozen=True)
class Report:
    """What a deployment's status is written from: this call's schedule and what it observed."""

    deployment: str
    desired: int                                   # spec.replicas
    sched: Schedule
    observed: Mapping[str, Mapping[str, Any]]      # children as observed, by resource name
    children: Mapping[tuple[int, str], Child] = field(default_factory=dict)  # the same, parsed, by key
    leaving: Sequence[Removal] = ()
    revision: str = ""
    generation: int | None = None                  # metadata.generation of the XR, when known


def placements(r: Report) -> list[dict]:
    """Current-revision placements, then extras, by index."""
    out = []
    for p in r.sched.placements:
        item = {
            "index": p.index,
            "name": replica_name(r.deployment, p.index, p.cluster),
            "cluster": p.cluster,
            "ready": replica_ready(r.observed.get(replica_resource(p.index, p.cluster))),
            "members": member_dicts(p),
        }
        if r.revision:
            item["revision"] = r.revision
        out.append(item)
    for p in r.sched.extras:
        child = r.children.get((p.index, p.cluster))
        if child is None or child.draining:
            continue
        item = {"index": p.index, "name": child.name, "cluster": p.cluster, "ready": child.ready,
                "members": _observed_members(child)}
        if child.revision:
            item["revision"] = child.revision
        out.append(item)
    return sorted(out, key=lambda i: (i["index"], i["cluster"]))


def removals(items: Sequence[Removal]) -> list[dict]:
    return [{"index": r.child.index, "name": r.child.name, "cluster": r.child.cluster, "cause": r.cause,
             "reason": r.reason, "phase": r.phase} for r in items]


def fields(r: Report) -> dict:
    items = placements(r)
    out: dict[str, Any] = {
        "replicas": {"desired": r.desired, "scheduled": len(items), "ready": sum(1 for i in items if i["ready"]),
                     "updated": len(r.sched.placements)},
        "selector": f"{L.DEPLOYMENT}={r.deployment}",
        "placements": items,
        "removals": removals(r.leaving),
    }
    if r.revision:
        out["revision"] = r.revision
    if r.generation is not None:
        out["observedGeneration"] = r.generation
    return out


def scheduled(sched: Schedule) -> Scheduled:
    if not sched.unplaced:
        return Scheduled(True, C.SCHEDULED_ALL, sched.message)
    reason = C.PARTIALLY_SCHEDULED if sched.placements else C.UNSCHEDULABLE
    return Scheduled(False, reason, sched.message)


def ready(status: Mapping[str, Any]) -> bool:
    r = status.get("replicas") or {}
    desired = r.get("desired") or 0
    return desired > 0 and (r.get("ready") or 0) >= desired
