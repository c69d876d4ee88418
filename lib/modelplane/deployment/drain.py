"""Removing a replica: out of routing first, deleted on a later call.

A ModelReplica leaves for one of two causes:

- ``Evicted``: it lost its place (the scheduler's ``evicted``: its cluster
  is gone, an untolerated NoExecute taint, its pool no longer matches or is
  gone, or it is overcommitted behind replicas admitted earlier);
- ``Removed``: it is one too many (scale-down, a duplicate index, the
  surplus after failover) or of an outdated revision the rollout retires.

Either way it goes in two steps, because its pods hold devices and serve
traffic until the ModelReplica is deleted:

1. Draining: its ModelEndpoint is no longer desired (Crossplane deletes it,
   so ModelServices stop routing to it) and the ModelReplica, otherwise
   untouched, is annotated ``modelplane.ai/draining: "<Cause>: <reason>"``.
   The annotation makes the decision stick: on later calls the replica is
   removed whatever the schedule says then.
2. Deleting: on a call where its ModelEndpoint is no longer observed (it
   was dropped on an earlier call; Crossplane no longer lists a child it
   deleted, even while it terminates), the ModelReplica is dropped too.

A replica that never had an endpoint (never routed) is deleted at once.
Until it is gone it is an extra replica to the scheduler (its observed
pods take capacity), and after it is dropped its allocation, still listed
by its InferenceCluster while it terminates, counts like anyone else's.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from modelplane.scheduler import Schedule

from .observed import Child

EVICTED = "Evicted"
REMOVED = "Removed"
DRAINING = "Draining"
DELETING = "Deleting"


@dataclass(frozen=True)
class Removal:
    child: Child
    cause: str  # EVICTED | REMOVED
    reason: str
    phase: str  # DRAINING | DELETING

    @property
    def note(self) -> str:
        """The ``modelplane.ai/draining`` annotation value."""
        return f"{self.cause}: {self.reason}"


def parse_note(note: str) -> tuple[str, str]:
    """(cause, reason) from an annotation value; unknown causes read as Removed."""
    cause, _, reason = note.partition(": ")
    if cause in (EVICTED, REMOVED):
        return cause, reason
    return REMOVED, note


def removal(child: Child, cause: str, reason: str) -> Removal:
    """How ``child`` leaves now; a replica already draining keeps its note."""
    if child.draining:
        cause, reason = parse_note(child.draining)
    return Removal(child, cause, reason, DRAINING if child.endpoint is not None else DELETING)


def removals(children: Iterable[Child], sched: Schedule, retire: Mapping[tuple[int, str], str] | None = None
             ) -> list[Removal]:
    """Every observed replica that goes: already draining, evicted or removed
    by the schedule, ``retire``d by the caller (key -> reason), or simply no
    longer scheduled. A placement of the same index on the same cluster
    always wins (the replica is rebuilt in place)."""
    placed = {(p.index, p.cluster) for p in sched.placements}
    extras = {(p.index, p.cluster) for p in sched.extras}
    evicted = {(e.index, e.cluster): e.reason for e in sched.evicted}
    removed = {(e.index, e.cluster): e.reason for e in sched.removed}
    retire = retire or {}
    out = []
    for c in children:
        if c.key in placed:
            continue
        if c.draining:
            out.append(removal(c, REMOVED, ""))
        elif c.key in evicted:
            out.append(removal(c, EVICTED, evicted[c.key]))
        elif c.key in removed:
            out.append(removal(c, REMOVED, removed[c.key]))
        elif c.key in retire:
            out.append(removal(c, REMOVED, retire[c.key]))
        elif c.key not in extras:
            out.append(removal(c, REMOVED, "no longer scheduled"))
    return out
