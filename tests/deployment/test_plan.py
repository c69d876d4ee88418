"""plan: which observed replicas count this call.

Every observed replica goes to the scheduler; it is an extra one when it is
draining, of an outdated revision, or on a failed cluster. Draining
replicas never keep a cluster "hosting" (no failover, no wake for them).
Unlabelled replicas are adopted as current. The rollout step gets the
current and outdated replicas that count and retires only outdated ones on
Ready clusters.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field

import pytest
from modelplane.deployment.observed import Child
from modelplane.deployment.plan import plan
from modelplane.deployment.strategy import RECREATE, Strategy
from modelplane.scheduler import Cluster

from tests.deployment.builders import OLD, REV, at, by_name, child, cluster, when

FIVE = datetime.timedelta(minutes=5)
T10 = when(10)
ROLLING = Strategy()
CLUSTERS = (cluster("a"), cluster("b"), cluster("c"))
Key = tuple[int, str]


def _down(name: str) -> Cluster:
    return cluster(name, ready=False)


@dataclass(frozen=True)
class Case:
    name: str
    children: tuple[Child, ...]
    clusters: tuple[Cluster, ...] = CLUSTERS
    since: dict[str, str] = field(default_factory=lambda: {"a": at(0), "b": at(0), "c": at(0)})
    strategy: Strategy = ROLLING
    replicas: int = 1
    after: datetime.timedelta | None = FIVE
    now: datetime.datetime = T10
    # What the plan must say; each is empty (or the default) unless the row names it.
    target: int = 1
    retire: frozenset[Key] = frozenset()
    extras: frozenset[Key] = frozenset()
    outdated: frozenset[Key] = frozenset()
    replaced: dict[Key, str] = field(default_factory=dict)
    wake: float | None = None


CASES = [
    Case("nothing observed: place them all", (), replicas=3, target=3),
    Case("one current replica on a Ready cluster counts", (child(),)),
    Case("an unlabelled replica is adopted as current", (child(revision=""),)),
    Case("a draining replica is an extra", (child(draining="Removed: scaled down to 1"),), extras={(0, "a")}),
    Case("an outdated replica is an extra and outdated; the surge replica is placed",
         (child(revision=OLD),), extras={(0, "a")}, outdated={(0, "a")}, target=1),
    Case("a draining outdated replica stays outdated", (child(revision=OLD, draining="Removed: x"),),
         extras={(0, "a")}, outdated={(0, "a")}),
    Case("the new replica serves: the outdated one is retired",
         (child(0, "a", revision=OLD), child(1, "b")), extras={(0, "a")}, outdated={(0, "a")},
         retire={(0, "a")}),
    Case("the new replica is not available: the outdated one waits",
         (child(0, "a", revision=OLD), child(1, "b", ready=False)), extras={(0, "a")}, outdated={(0, "a")}),
    Case("an outdated replica on a NotReady cluster is never retired",
         (child(0, "a", revision=OLD), child(1, "b")), clusters=(_down("a"), cluster("b")),
         now=when(1), extras={(0, "a")}, outdated={(0, "a")}, wake=240.0),
    Case("an outdated replica on a cluster without pools is never retired",
         (child(0, "a", revision=OLD), child(1, "b")), clusters=(cluster("a", published=False), cluster("b")),
         now=when(1), extras={(0, "a")}, outdated={(0, "a")}, wake=240.0),
    Case("a cluster down less than after: its replica still counts, and the call comes back",
         (child(),), clusters=(_down("a"),), now=when(3), wake=120.0),
    Case("a cluster down for after: its replica is an extra, replaced since the outage",
         (child(),), clusters=(_down("a"),), now=when(5), extras={(0, "a")}, replaced={(0, "a"): at(0)}),
    Case("failover disabled: a cluster down for ever still counts", (child(),), clusters=(_down("a"),),
         after=None, now=when(10_000)),
    Case("a draining replica on a down cluster: no failover, no wake",
         (child(draining="Removed: x"),), clusters=(_down("a"),), now=when(3), extras={(0, "a")}),
    Case("an outdated replica on a failed cluster: replaced, not retired, not counted as old",
         (child(0, "a", revision=OLD), child(1, "b")), clusters=(_down("a"), cluster("b")),
         extras={(0, "a")}, outdated={(0, "a")}, replaced={(0, "a"): at(0)}),
    Case("a replica on a cluster gone from the fleet counts (the scheduler evicts it)",
         (child(0, "gone"),)),
    Case("the wake is for the soonest of the hosting clusters",
         (child(0, "a"), child(1, "b")), clusters=(_down("a"), _down("b"), cluster("c")),
         since={"a": at(0), "b": at(2)}, now=when(4), replicas=2, target=2, wake=60.0),
    Case("Recreate: every outdated replica goes and nothing is placed",
         (child(0, "a", revision=OLD), child(1, "b", revision=OLD)), strategy=Strategy(RECREATE, 0, 2),
         replicas=2, target=0, extras={(0, "a"), (1, "b")}, outdated={(0, "a"), (1, "b")},
         retire={(0, "a"), (1, "b")}),
    Case("Recreate: nothing placed while an outdated replica drains",
         (child(0, "a", revision=OLD, draining="Removed: x"),), strategy=Strategy(RECREATE, 0, 1),
         target=0, extras={(0, "a")}, outdated={(0, "a")}),
    Case("Recreate: a draining current replica does not hold the new revision back",
         (child(0, "a", draining="Removed: x"),), strategy=Strategy(RECREATE, 0, 1), extras={(0, "a")}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_plan(case: Case) -> None:
    p = plan(case.children, by_name(case.clusters), lambda n: case.since.get(n, ""), REV, case.strategy, case.replicas,
             case.after, case.now)
    got = (p.step.target, frozenset(p.step.retire), frozenset((c.index, c.cluster) for c in p.current if c.extra), p.outdated,
           p.replaced, p.wake)
    want = (case.target, case.retire, case.extras, case.outdated, case.replaced, case.wake)
    assert got == want, f"-want {want}, +got {got}"


def test_every_observed_replica_goes_to_the_scheduler_in_order() -> None:
    kids = (child(0, "a"), child(1, "b", revision=OLD), child(2, "c", draining="Removed: x"))
    p = plan(kids, by_name(CLUSTERS), lambda n: at(0), REV, Strategy(), 3, FIVE, when(10))
    assert [(c.index, c.cluster, c.extra) for c in p.current] == [(0, "a", False), (1, "b", True), (2, "c", True)]
    assert all(c.pools == ("p",) for c in p.current)  # the scheduler's view of each (observed.Child.current)


def test_a_replaced_replica_tells_the_scheduler_since_when_once_annotated() -> None:
    # The plan hands failover's outage start to compose (to annotate); the
    # scheduler reads it back from the annotation on the next call.
    annotated = child(replaced=at(0))
    p = plan((annotated,), by_name([cluster("a", ready=False)]), lambda n: at(0), REV, Strategy(), 1, FIVE, when(10))
    assert p.current[0].replaced == at(0) and p.current[0].extra
