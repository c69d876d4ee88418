"""drain: how a replica leaves.

Out of routing first (Draining: its endpoint is kept, out of routing),
then, once the routes are observed clear of it, its endpoint dropped and the
drain period run, then deleted (Deleting), or at once when it never had an
endpoint. Once a replica
is draining its note sticks, whatever the schedule says later; only a
placement of the same index on the same cluster keeps it.
"""
from __future__ import annotations

import copy
import dataclasses
import datetime
from dataclasses import dataclass, field

import pytest
from modelplane.deployment.drain import (
    DELETING,
    DRAINING,
    EVICTED,
    REMOVED,
    Drain,
    Removal,
    parse_note,
    removal,
    removals,
)
from modelplane.deployment.observed import Child
from modelplane.scheduler import Schedule

from tests.deployment.builders import child, eviction, placement, schedule


@dataclass(frozen=True)
class Note:
    name: str
    note: str
    want: tuple[str, str]


NOTES = [
    Note("evicted", "Evicted: cluster gone no longer exists", (EVICTED, "cluster gone no longer exists")),
    Note("removed", "Removed: scaled down to 1", (REMOVED, "scaled down to 1")),
    Note("a reason with its own colon", "Evicted: NoExecute taint: maint", (EVICTED, "NoExecute taint: maint")),
    Note("no reason", "Removed: ", (REMOVED, "")),
    Note("an unknown cause reads as Removed, whole", "Moved: elsewhere", (REMOVED, "Moved: elsewhere")),
    Note("no separator at all", "going", (REMOVED, "going")),
    Note("a cause without the space", "Evicted:gone", (REMOVED, "Evicted:gone")),
]


@pytest.mark.parametrize("case", NOTES, ids=lambda c: c.name)
def test_parse_note(case: Note) -> None:
    got = parse_note(case.note)
    assert got == case.want, f"-want {case.want}, +got {got}"


@pytest.mark.parametrize("cause,reason", [(EVICTED, "pool l4 no longer exists"), (REMOVED, "scaled down to 2"),
                                          (REMOVED, "outdated: revision x replaces it")])
def test_a_note_reads_back_as_written(cause: str, reason: str) -> None:
    note = Removal(child(), cause, reason, DRAINING).note
    assert note == f"{cause}: {reason}"
    assert parse_note(note) == (cause, reason)


@dataclass(frozen=True)
class One:
    name: str
    child: Child
    want: tuple[str, str, str]  # cause, reason, phase
    cause: str = EVICTED
    reason: str = "now"


ONES = [
    One("routed: out of routing first", child(), (EVICTED, "now", DRAINING)),
    One("an endpoint not routable yet still drains", child(routed=False), (EVICTED, "now", DRAINING)),
    One("never had an endpoint: deleted at once", child(endpoint=False), (EVICTED, "now", DELETING)),
    One("its endpoint is gone: deleted now", child(endpoint=False, draining="Removed: scaled down to 1"),
        (REMOVED, "scaled down to 1", DELETING)),
    One("already draining: its own note wins over today's cause", child(draining="Removed: scaled down to 1"),
        (REMOVED, "scaled down to 1", DRAINING)),
    One("already draining as Evicted: stays Evicted", child(draining="Evicted: cluster a no longer exists"),
        (EVICTED, "cluster a no longer exists", DRAINING), cause=REMOVED, reason="no longer scheduled"),
]


@pytest.mark.parametrize("case", ONES, ids=lambda c: c.name)
def test_removal(case: One) -> None:
    got = removal(case.child, case.cause, case.reason)
    assert got.child is case.child
    assert (got.cause, got.reason, got.phase) == case.want, f"-want {case.want}, +got {got}"


def test_a_replica_drains_then_is_deleted() -> None:
    # Call 1: routed, so only out of routing. Call 2: its endpoint was dropped
    # and is no longer observed; the note it was given decides, and it goes.
    first = removals([child()], schedule(evicted=[eviction(reason="pool p no longer exists")]))
    assert [(r.cause, r.reason, r.phase) for r in first] == [(EVICTED, "pool p no longer exists", DRAINING)]
    after = child(endpoint=False, draining=first[0].note)
    second = removals([after], schedule(placements=[placement(0, "b")]))
    assert [(r.cause, r.reason, r.phase) for r in second] == [(EVICTED, "pool p no longer exists", DELETING)]


@dataclass(frozen=True)
class Many:
    name: str
    children: tuple[Child, ...]
    sched: Schedule
    want: list[tuple[int, str, str, str]]  # index, cluster, cause, reason
    retire: dict[tuple[int, str], str] = field(default_factory=dict)


EVICT = eviction(0, "a", "cluster a no longer exists")
SCALE = eviction(0, "a", "scaled down to 0")

MANY = [
    Many("placed: stays", (child(),), schedule(placements=[placement()]), []),
    Many("an extra that stays: stays", (child(),), schedule(extras=[placement()]), []),
    Many("nowhere in the schedule: no longer scheduled", (child(),), schedule(),
         [(0, "a", REMOVED, "no longer scheduled")]),
    Many("the same index placed elsewhere does not keep it", (child(),), schedule(placements=[placement(0, "b")]),
         [(0, "a", REMOVED, "no longer scheduled")]),
    Many("evicted", (child(),), schedule(evicted=[EVICT]), [(0, "a", EVICTED, "cluster a no longer exists")]),
    Many("removed by a scale-down", (child(),), schedule(removed=[SCALE]), [(0, "a", REMOVED, "scaled down to 0")]),
    Many("retired by the rollout", (child(revision="old"),), schedule(extras=[placement()]),
         [(0, "a", REMOVED, "outdated")], retire={(0, "a"): "outdated"}),
    Many("evicted wins over removed", (child(),), schedule(evicted=[EVICT], removed=[SCALE]),
         [(0, "a", EVICTED, "cluster a no longer exists")]),
    Many("the schedule wins over the rollout", (child(),), schedule(removed=[SCALE]),
         [(0, "a", REMOVED, "scaled down to 0")], retire={(0, "a"): "outdated"}),
    Many("draining sticks though the schedule keeps it as an extra", (child(draining="Removed: scaled down to 1"),),
         schedule(extras=[placement()]), [(0, "a", REMOVED, "scaled down to 1")]),
    Many("draining sticks over a later eviction", (child(draining="Removed: scaled down to 1"),),
         schedule(evicted=[EVICT]), [(0, "a", REMOVED, "scaled down to 1")]),
    Many("a placement of the same index and cluster wins over an eviction", (child(),),
         schedule(placements=[placement()], evicted=[EVICT]), []),
    Many("an eviction of another replica does not touch this one", (child(1, "a"),),
         schedule(placements=[placement(1, "a")], evicted=[EVICT]), []),
    Many("in the order observed", (child(2, "b"), child(0, "a"), child(1, "c")), schedule(),
         [(2, "b", REMOVED, "no longer scheduled"), (0, "a", REMOVED, "no longer scheduled"),
          (1, "c", REMOVED, "no longer scheduled")]),
]


@pytest.mark.parametrize("case", MANY, ids=lambda c: c.name)
def test_removals(case: Many) -> None:
    got = [(r.child.index, r.child.cluster, r.cause, r.reason)
           for r in removals(case.children, case.sched, case.retire)]
    assert got == case.want, f"-want {case.want}, +got {got}"


def test_removals_without_retire() -> None:
    assert removals([child()], schedule(placements=[placement()])) == []
    assert [r.child.key for r in removals([child()], schedule(), None)] == [(0, "a")]


# --- draining against the routes as observed ------------------------------------------

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
NAME0 = "qwen3-8b-0-a"


def _out_of_routing(c: Child, unrouted: str = "") -> Child:
    """``c`` on a call after its endpoint was taken out of routing (and, with ``unrouted``, dropped)."""
    endpoint = None
    if not unrouted:
        endpoint = copy.deepcopy(c.endpoint)
        endpoint["metadata"]["annotations"] = {"modelplane.ai/out-of-routing": "draining: Removed: scaled down"}
    obj = copy.deepcopy(c.obj)
    obj.setdefault("status", {})["backendRefs"] = [{"group": "", "kind": "Service", "name": f"{c.name}-engine"}]
    return dataclasses.replace(c, obj=obj, endpoint=endpoint, draining="Removed: scaled down", unrouted=unrouted)


def _drain(*routed: str, seconds: float = 0, period: float = 60) -> Drain:
    return Drain(frozenset(routed), T0 + datetime.timedelta(seconds=seconds), datetime.timedelta(seconds=period))


@dataclass(frozen=True)
class Step:
    name: str
    child: Child
    drain: Drain
    want: tuple[str, bool, str, float | None]   # phase, carried, unrouted, wait


STEPS = [
    Step("just decided: out of routing first, whatever the routes say", child(), _drain(),
         (DRAINING, True, "", None)),
    Step("out of routing, the control-plane route still names its Service", _out_of_routing(child()),
         _drain(f"{child().name}-backend"), (DRAINING, True, "", None)),
    Step("out of routing, a cluster route still names its engine", _out_of_routing(child()),
         _drain(f"{child().name}-engine"), (DRAINING, True, "", None)),
    Step("routes clear: the period starts now", _out_of_routing(child()), _drain("someone-else-backend"),
         (DRAINING, False, "2026-01-01T00:00:00Z", 60.0)),
    Step("routes clear, period running", _out_of_routing(child(), unrouted="2026-01-01T00:00:00Z"),
         _drain(seconds=45), (DRAINING, False, "2026-01-01T00:00:00Z", 15.0)),
    Step("period over: deleted", _out_of_routing(child(), unrouted="2026-01-01T00:00:00Z"),
         _drain(seconds=60), (DELETING, False, "2026-01-01T00:00:00Z", None)),
    Step("period 0: deleted as soon as the routes are clear", _out_of_routing(child()), _drain(period=0),
         (DELETING, False, "2026-01-01T00:00:00Z", None)),
]


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.name)
def test_a_replica_is_deleted_only_after_the_routes_drop_it_and_the_period_passes(step: Step):
    r = removal(step.child, REMOVED, "scaled down", step.drain)
    assert (r.phase, r.carried, r.unrouted, r.wait) == step.want
