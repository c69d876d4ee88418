"""A ModelDeployment's status: replica counts, placements, removals, Scheduled.

Shapes are in docs/contracts.md. ``ready`` counts placed replicas whose
observed ModelReplica is ready; the deployment is Ready when every desired
replica is placed and ready. ``removals`` lists the replicas on their way
out (drained, then deleted) with their cause and reason.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane import conditions as C
from modelplane import labels as L
from modelplane.naming import replica_name
from modelplane.scheduler import Schedule, member_dicts

from .drain import Removal
from .observed import replica_ready, replica_resource

# Status fields this function owns; re-published unchanged while waiting.
FIELDS = ("replicas", "selector", "placements", "removals")


@dataclass(frozen=True)
class Scheduled:
    status: bool
    reason: str
    message: str


def placements(deployment: str, sched: Schedule, observed: Mapping[str, Mapping[str, Any]]) -> list[dict]:
    out = []
    for p in sched.placements:
        out.append({
            "index": p.index,
            "name": replica_name(deployment, p.index, p.cluster),
            "cluster": p.cluster,
            "ready": replica_ready(observed.get(replica_resource(p.index, p.cluster))),
            "members": member_dicts(p),
        })
    return out


def removals(items: list[Removal]) -> list[dict]:
    return [{"index": r.child.index, "name": r.child.name, "cluster": r.child.cluster, "cause": r.cause,
             "reason": r.reason, "phase": r.phase} for r in items]


def fields(deployment: str, desired: int, sched: Schedule, observed: Mapping[str, Mapping[str, Any]],
           leaving: list[Removal] | None = None) -> dict:
    items = placements(deployment, sched, observed)
    return {
        "replicas": {"desired": desired, "scheduled": len(items), "ready": sum(1 for i in items if i["ready"])},
        "selector": f"{L.DEPLOYMENT}={deployment}",
        "placements": items,
        "removals": removals(leaving or []),
    }


def scheduled(sched: Schedule) -> Scheduled:
    if not sched.unplaced:
        return Scheduled(True, C.SCHEDULED_ALL, sched.message)
    reason = C.PARTIALLY_SCHEDULED if sched.placements else C.UNSCHEDULABLE
    return Scheduled(False, reason, sched.message)


def ready(status: Mapping[str, Any]) -> bool:
    r = status.get("replicas") or {}
    desired = r.get("desired") or 0
    return desired > 0 and r.get("scheduled") == desired and r.get("ready") == desired
