"""Removing a replica: out of routing, drained, then deleted.

A ModelReplica leaves for one of two causes:

- ``Evicted``: it lost its place (the scheduler's ``evicted``: its cluster
  is gone, an untolerated NoExecute taint, its pool is gone or its class
  has fewer devices per node than its pods take, or it is overcommitted
  behind replicas admitted earlier; a class that stops satisfying its
  selectors holds it instead);
- ``Removed``: it is one too many (scale-down, a duplicate index, the
  surplus after failover) or of an outdated revision the rollout retires.

Either way its pods hold devices and serve traffic until the ModelReplica is
deleted, so it goes in steps, each decided from what is observed:

1. Out of routing (phase ``Draining``): the ModelReplica, otherwise
   untouched, is annotated ``modelplane.ai/draining: "<Cause>: <reason>"``
   (the decision sticks: on later calls the replica is removed whatever the
   schedule says then), and its ModelEndpoint, kept, is annotated
   ``modelplane.ai/out-of-routing``: every ModelService leaves it out of its
   routes. Deleting the endpoint now would delete the Service a route still
   names, and its share of requests would fail.
2. Routes clear (still ``Draining``): on a later call, where the endpoint is
   observed out of routing and no ModelService of the namespace
   lists any of the replica's backends in ``status.routedBackends`` (its
   routes as observed), the replica is annotated ``modelplane.ai/unrouted:
   <now>`` and its endpoint is dropped; in-flight requests finish.
3. Deleting: ``spec.drain.period`` after that time the ModelReplica is
   dropped too.

A replica that never had an endpoint (never routed) is deleted at once.
Until it is gone it is an extra replica to the scheduler (its observed
pods take capacity), and after it is dropped its allocation, still listed
by its InferenceCluster while it terminates, counts like anyone else's.
"""
from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from modelplane.scheduler import Schedule

from .observed import OUT_OF_ROUTING, Child, backends

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
    unrouted: str = ""   # when the routes were first seen clear of it ("" while they carry it)
    wait: float | None = None   # seconds until it may be deleted (routes clear, period running)

    @property
    def note(self) -> str:
        """The ``modelplane.ai/draining`` annotation value."""
        return f"{self.cause}: {self.reason}"

    @property
    def carried(self) -> bool:
        """Some route may still send to it: its endpoint stays, out of routing."""
        return self.phase == DRAINING and not self.unrouted


@dataclass(frozen=True)
class Drain:
    """What draining needs from this call: the routes as observed, the clock, the period."""

    routed: frozenset[str]          # every ModelService's status.routedBackends in the namespace
    now: datetime.datetime
    period: datetime.timedelta

    def stamp(self) -> str:
        return self.now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_note(note: str) -> tuple[str, str]:
    """(cause, reason) from an annotation value; unknown causes read as Removed."""
    cause, _, reason = note.partition(": ")
    if cause in (EVICTED, REMOVED):
        return cause, reason
    return REMOVED, note


def _since(stamp: str) -> datetime.datetime | None:
    try:
        return datetime.datetime.fromisoformat(stamp)
    except ValueError:
        return None


def removal(child: Child, cause: str, reason: str, drain: Drain | None = None) -> Removal:
    """How ``child`` leaves now; a replica already draining keeps its note."""
    if child.draining:
        cause, reason = parse_note(child.draining)
    if child.endpoint is None and not child.unrouted:
        return Removal(child, cause, reason, DELETING)   # never routed
    if drain is None:
        return Removal(child, cause, reason, DRAINING)
    unrouted = child.unrouted
    if not unrouted or _since(unrouted) is None:
        # Routes are judged only once the endpoint is observed out of routing: a ModelService
        # that read it before may still add it, and the status read now predates that.
        out = bool(((child.endpoint or {}).get("metadata") or {}).get("annotations", {}).get(OUT_OF_ROUTING))
        if not out or backends(child) & drain.routed:
            return Removal(child, cause, reason, DRAINING)   # a route may still carry it
        unrouted = drain.stamp()
    left = (_since(unrouted) + drain.period - drain.now).total_seconds()
    if left <= 0:
        return Removal(child, cause, reason, DELETING, unrouted)
    return Removal(child, cause, reason, DRAINING, unrouted, left)


def removals(children: Iterable[Child], sched: Schedule, retire: Mapping[tuple[int, str], str] | None = None,
             drain: Drain | None = None) -> list[Removal]:
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
            out.append(removal(c, REMOVED, "", drain))
        elif c.key in evicted:
            out.append(removal(c, EVICTED, evicted[c.key], drain))
        elif c.key in removed:
            out.append(removal(c, REMOVED, removed[c.key], drain))
        elif c.key in retire:
            out.append(removal(c, REMOVED, retire[c.key], drain))
        elif c.key not in extras:
            out.append(removal(c, REMOVED, "no longer scheduled", drain))
    return out
