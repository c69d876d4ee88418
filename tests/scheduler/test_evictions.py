"""Held versus evicted, extra replicas, and which indexes a new replica may take."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from modelplane.scheduler import HELD, KEPT, Current, Eviction, PodGroup, PoolPlacement, schedule

from tests.scheduler.builders import (
    FakeMatcher,
    _alloc,
    _class,
    _cluster,
    _current,
    _deployment,
    _dev,
    _engine,
    _fleet,
    _pool,
    _standalone,
    where,
)

EIGHT = _deployment(engines=[_engine(members=[_standalone(8)])])
OVERCOMMITTED = "overcommitted: no longer fits behind replicas admitted earlier"


def _extra(index, cluster, pool="a100", gpus=8, order=None, **kw) -> Current:
    """An extra replica holding one pod of ``gpus`` in ``pool``."""
    d = _deployment()
    return Current(index, cluster, (pool,), order or d.order(index),
                   pods=(PoolPlacement(pool, (PodGroup(1, {"gpu": gpus}),)),), extra=True, **kw)


@dataclass(frozen=True)
class EvictCase:
    name: str
    clusters: tuple
    current: tuple
    evicted: tuple  # (index, cluster, reason)
    deployment: object = None
    classes: dict | None = None


EVICTIONS = [
    EvictCase("cluster deleted (or no longer selected)", (_cluster("a"),), (_current(0, "gone"),),
              ((0, "gone", "cluster gone no longer exists"),)),
    EvictCase("untolerated NoExecute taint", (_cluster("a", taints=[("maintenance", "", "NoExecute")]),),
              (_current(0, "a"),), ((0, "a", "NoExecute taint maintenance"),)),
    EvictCase("NoExecute drains even a NotReady cluster", (_cluster("a", ready=False, taints=[("m", "", "NoExecute")]),),
              (_current(0, "a"),), ((0, "a", "NoExecute taint m"),)),
    EvictCase("pool removed from the cluster", (_cluster("a", pools=[_pool("l4")]), _cluster("b")),
              (_current(0, "a", "a100"),), ((0, "a", "pool a100 no longer exists"),), EIGHT),
    EvictCase("class devices shrank below the request", (_cluster("a"),), (_current(0, "a"),),
              ((0, "a", 'pool a100 no longer matches request "gpu" (device gpu: count 8 > 4 per node)'),), EIGHT,
              classes={"a100": _class("a100", _dev(count=4))}),
    EvictCase("admitted after a replica that now fills the node",
              (_cluster("a", pools=[_pool(nodes=1, allocations=[_alloc(gpus=8)])]),), (_current(0, "a"),),
              ((0, "a", OVERCOMMITTED),), EIGHT),
]


@pytest.mark.parametrize("case", EVICTIONS, ids=[c.name for c in EVICTIONS])
def test_each_eviction_cause_is_reported(case: EvictCase) -> None:
    from tests.scheduler.builders import CLASSES

    classes = {**CLASSES, **(case.classes or {})}
    got = schedule(case.deployment or _deployment(), _fleet(*case.clusters, classes=classes), case.current,
                   matcher=FakeMatcher())
    assert {(e.index, e.cluster, e.reason) for e in got.evicted} == set(case.evicted)
    # The evicted copy is never reported as placed where it was.
    assert all((p.index, p.cluster) not in {(e.index, e.cluster) for e in got.evicted} for p in got.placements)


HOLDS = [
    ("clusters not fetched", (), False, None),
    ("no cluster listed at all", (), True, None),
    ("cluster has not published pools", (_cluster("a", pools="unknown"),), True, None),
    ("cluster NotReady with no usable nodes", (_cluster("a", ready=False, pools=[_pool(nodes=0)]),), True, None),
    ("the pool's class is not observed", (_cluster("a", pools=[_pool("a100", cls="unknown-class")]),), True, None),
]


@pytest.mark.parametrize(("name", "clusters", "known", "_"), HOLDS, ids=[h[0] for h in HOLDS])
def test_held_replicas_lose_nothing(name, clusters, known, _) -> None:
    current = (_current(0, "a"), _extra(1, "a"))
    got = schedule(EIGHT, _fleet(*clusters, known=known), current, matcher=FakeMatcher())
    assert got.evicted == () and got.removed == ()
    assert [(p.index, p.state) for p in got.placements] == [(0, HELD)]
    assert [(p.index, p.state) for p in got.extras] == [(1, HELD)]


def test_an_extra_that_stays_takes_capacity_at_its_own_order() -> None:
    # One node: the outdated replica 0 holds it, so the current revision's replica waits.
    got = schedule(EIGHT, _fleet(_cluster("a", pools=[_pool(nodes=1)])), (_extra(0, "a"),), matcher=FakeMatcher())
    assert [(p.index, p.state) for p in got.extras] == [(0, KEPT)]
    assert got.placements == () and [u.index for u in got.unplaced] == [1]
    assert "pool a100 has room for 0 of 1 pods" in got.unplaced[0].message


def test_an_extra_behind_an_earlier_admission_is_evicted() -> None:
    fleet = _fleet(_cluster("a", pools=[_pool(nodes=1, allocations=[_alloc(gpus=8)])]))
    got = schedule(EIGHT, fleet, (_extra(0, "a"),), matcher=FakeMatcher())
    assert got.evicted == (Eviction(0, "a", OVERCOMMITTED),) and got.extras == ()


def test_an_extra_on_a_draining_cluster_is_evicted_not_moved() -> None:
    fleet = _fleet(_cluster("a", taints=[("m", "", "NoExecute")]), _cluster("b"))
    got = schedule(_deployment(replicas=0), fleet, (_extra(0, "a"),), matcher=FakeMatcher())
    assert got.evicted == (Eviction(0, "a", "NoExecute taint m"),)
    assert got.placements == () and got.unplaced == ()


def test_new_replicas_skip_indexes_of_extras_and_terminating_replicas() -> None:
    fleet = replace(_fleet(_cluster("a"), _cluster("b")), terminating=frozenset({1}))
    got = schedule(_deployment(replicas=2), fleet, (_extra(0, "a", gpus=1),), matcher=FakeMatcher())
    assert sorted(where(got)) == [2, 3]


def test_terminating_indexes_are_not_read_when_no_new_replica_is_needed() -> None:
    class Exploding:
        def __contains__(self, _):
            raise AssertionError("read although nothing new is placed")

    fleet = replace(_fleet(_cluster("a")), terminating=Exploding())
    got = schedule(_deployment(), fleet, (_current(0, "a"),), matcher=FakeMatcher())
    assert where(got) == {0: "a"}


def test_scale_down_reports_what_it_removed() -> None:
    got = schedule(_deployment(replicas=1), _fleet(_cluster("a"), _cluster("b")),
                   (_current(0, "a"), _current(1, "b")), matcher=FakeMatcher())
    assert got.removed == (Eviction(1, "b", "scaled down to 1"),) and got.evicted == ()


def test_a_duplicate_index_is_removed_with_a_reason() -> None:
    got = schedule(_deployment(), _fleet(_cluster("a"), _cluster("b")), (_current(0, "b"), _current(0, "a")),
                   matcher=FakeMatcher())
    assert got.removed == (Eviction(0, "b", "a duplicate of replica 0 on a"),)


def test_scale_down_removes_failover_replaced_replicas_first_oldest_outage_first() -> None:
    current = (
        _current(0, "a"),
        replace(_current(1, "b"), replaced="2026-01-01T00:10:00Z"),
        replace(_current(2, "c"), replaced="2026-01-01T00:05:00Z"),
        _current(3, "d"),
    )
    fleet = _fleet(*(_cluster(n) for n in "abcd"))
    got = schedule(_deployment(replicas=3), fleet, current, matcher=FakeMatcher())
    assert [(e.index, e.cluster) for e in got.removed] == [(2, "c")]
    got = schedule(_deployment(replicas=2), fleet, current, matcher=FakeMatcher())
    assert [(e.index, e.cluster) for e in got.removed] == [(1, "b"), (2, "c")]


def test_a_replica_moved_to_another_pool_of_its_cluster_is_updated_not_evicted() -> None:
    got = schedule(_deployment(), _fleet(_cluster("a", pools=[_pool("h200")])), (_current(0, "a", "a100"),),
                   matcher=FakeMatcher())
    assert [(p.index, p.cluster, p.members[0].pool) for p in got.placements] == [(0, "a", "h200")]
    assert got.evicted == ()
