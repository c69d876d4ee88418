"""keep(): every outcome of the keep phase, read by name from ``Kept``.

One class of 8-GPU nodes and a one-member deployment keep the rows short;
the builders (builders.py, wrapped below) fill in everything a row does not
mention. ``_alloc()`` is another deployment's pod, admitted before this
deployment existed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from modelplane.scheduler import (
    HELD,
    KEPT,
    Allocation,
    Cluster,
    Current,
    Deployment,
    Fleet,
    Matches,
    PodGroup,
    PoolPlacement,
)
from modelplane.scheduler.keep import OVERCOMMITTED, Kept, keep

from tests.scheduler import builders
from tests.scheduler.builders import _alloc, _engine, _pool, _standalone

CLASSES = {"a100": builders.CLASSES["a100"]}
# Admission keys either side of the deployment's own (created 2025-01-01).
EARLIER = "2024-01-01T00:00:00Z/ml/old/00000"
LATER = "2026-01-01T00:00:00Z/ml/old/00000"
GONE = "cluster gone no longer exists"


def _no_cel(expr: str, device: object) -> object:
    raise AssertionError(f"no row has selectors, yet CEL ran {expr!r}")


def _deployment(replicas: int = 1, gpus: int = 1) -> Deployment:
    return builders._deployment(replicas, engines=[_engine(members=[_standalone(gpus)])])


def _cluster(
    name: str = "a", nodes: int = 2, allocations: tuple[Allocation, ...] = (), ready: bool = True
) -> Cluster:
    return builders._cluster(name, pools=[_pool(nodes=nodes, allocations=allocations)], ready=ready)


def _replica(index: int, cluster: str = "a", replaced: str = "") -> Current:
    return Current(index, cluster, ("a100",), replaced=replaced)


def _extra(index: int, cluster: str = "a", gpus: int = 1, order: str = "", pool: str = "a100") -> Current:
    """An extra replica holding one pod of ``gpus`` in ``pool``."""
    pods = (PoolPlacement(pool, (PodGroup(1, {"gpu": gpus}),)),)
    return Current(index, cluster, (pool,), order, pods=pods, extra=True)


@dataclass(frozen=True)
class Case:
    name: str
    current: tuple[Current, ...]
    clusters: tuple[Cluster, ...] = (_cluster(),)
    replicas: int = 1
    gpus: int = 1
    known: bool = True
    terminating: frozenset[int] = frozenset()
    # What Kept must say; each is empty unless the row names it.
    placed: dict[int, tuple[str, str]] = field(default_factory=dict)  # index -> (cluster, state)
    leaving: dict[int, tuple[str, str]] = field(default_factory=dict)  # index -> (cluster, reason)
    wanted: tuple[int, ...] = ()
    fills: dict[str, int] = field(default_factory=dict)  # cluster -> replicas of ours in its fill
    held_on: dict[str, int] = field(default_factory=dict)
    extras: tuple[tuple[int, str, str], ...] = ()  # (index, cluster, state)
    evicted: tuple[tuple[int, str, str], ...] = ()  # (index, cluster, reason)
    removed: tuple[tuple[int, str, str], ...] = ()


CASES = [
    Case("a replica that still fits stays and counts in its cluster's fill", (_replica(0),),
         placed={0: ("a", KEPT)}, fills={"a": 1}),
    Case("a replica on a cluster gone from the fleet leaves and is wanted again", (_replica(0, "gone"),),
         leaving={0: ("gone", GONE)}, wanted=(0,), evicted=((0, "gone", GONE),)),
    Case("a replica on a NotReady cluster is held and counts for spread only", (_replica(0),),
         clusters=(_cluster(ready=False),), placed={0: ("a", HELD)}, held_on={"a": 1}),
    Case("before clusters are observed every replica is held, extras too", (_replica(0), _extra(1)),
         clusters=(), known=False, placed={0: ("a", HELD)}, held_on={"a": 1}, extras=((1, "a", HELD),)),
    Case("scale-up skips the indexes of extras and of terminating replicas", (_replica(0), _extra(1)),
         replicas=3, terminating=frozenset({2}), placed={0: ("a", KEPT)}, wanted=(3, 4), fills={"a": 1},
         extras=((1, "a", KEPT),)),
    Case("scale-down lets the highest index go", (_replica(0), _replica(1)),
         placed={0: ("a", KEPT)}, fills={"a": 1}, removed=((1, "a", "scaled down to 1"),)),
    Case("scale-down lets a replica replaced by failover go first",
         (_replica(0, replaced="2025-02-01T00:00:00Z"), _replica(1)), placed={1: ("a", KEPT)}, fills={"a": 1},
         removed=((0, "a", "replaced while its cluster was down (since 2025-02-01T00:00:00Z)"),)),
    Case("scale-down evicts a replica that lost its place anyway", (_replica(0), _replica(1, "gone")),
         placed={0: ("a", KEPT)}, fills={"a": 1}, evicted=((1, "gone", GONE),)),
    Case("a second copy of an index is removed from the cluster that sorts later",
         (_replica(0, "b"), _replica(0)), clusters=(_cluster("a"), _cluster("b")), placed={0: ("a", KEPT)},
         fills={"a": 1},
         removed=((0, "b", "a duplicate of replica 0 on a"),)),
    Case("a replica admitted after a pod that fills the node leaves, overcommitted", (_replica(0),),
         clusters=(_cluster(nodes=1, allocations=(_alloc(),)),), gpus=8, leaving={0: ("a", OVERCOMMITTED)},
         wanted=(0,), fills={"a": 0}, evicted=((0, "a", OVERCOMMITTED),)),
    Case("an extra admitted earlier stays; the replica of the same index leaves",
         (_replica(0), _extra(0, gpus=8, order=EARLIER)), clusters=(_cluster(nodes=1),), gpus=8,
         leaving={0: ("a", OVERCOMMITTED)}, wanted=(0,), fills={"a": 0}, extras=((0, "a", KEPT),),
         evicted=((0, "a", OVERCOMMITTED),)),
    Case("a replica admitted earlier stays; the extra of the same index is evicted",
         (_replica(0), _extra(0, gpus=8, order=LATER)), clusters=(_cluster(nodes=1),), gpus=8,
         placed={0: ("a", KEPT)}, fills={"a": 1}, evicted=((0, "a", OVERCOMMITTED),)),
    Case("an extra whose pool is gone is evicted, and its index is not reused", (_extra(0, pool="l4"),),
         wanted=(1,), evicted=((0, "a", "pool l4 no longer exists"),)),
]


def _run(case: Case) -> Kept:
    deployment = _deployment(case.replicas, case.gpus)
    fleet = Fleet(case.clusters, CLASSES, None, case.known, case.terminating)
    matches = Matches(deployment, fleet.classes, _no_cel)
    return keep(deployment, fleet, matches, {c.name: c for c in case.clusters}, case.current)


def _said(kept: Kept) -> dict[str, object]:
    """``kept`` in the shape of a row's expectations."""
    return {
        "placed": {i: (p.cluster, p.state) for i, p in kept.placed.items()},
        "leaving": {i: (e.cluster, e.reason) for i, e in kept.leaving.items()},
        "wanted": kept.wanted,
        "fills": {name: state.own for name, state in kept.fills.items()},
        "held_on": dict(kept.held_on),
        "extras": tuple((p.index, p.cluster, p.state) for p in kept.extras),
        "evicted": tuple((e.index, e.cluster, e.reason) for e in kept.evicted),
        "removed": tuple((e.index, e.cluster, e.reason) for e in kept.removed),
    }


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_keep_names_every_outcome(case: Case) -> None:
    said = _said(_run(case))
    assert said == {name: getattr(case, name) for name in said}


def test_a_leaving_replica_is_both_evicted_and_wanted_again() -> None:
    # The result phase relies on this: a replica re-placed on the cluster it
    # left drops its eviction, found by (index, cluster) in Kept.evicted.
    full = _cluster(nodes=1, allocations=(_alloc(),))
    kept = _run(Case("two leave", (_replica(0, "gone"), _replica(1)), clusters=(full,), replicas=2, gpus=8))
    assert set(kept.leaving) == {0, 1}
    assert [(e.index, e.cluster) for e in kept.evicted] == [(i, e.cluster) for i, e in kept.leaving.items()]
    assert set(kept.leaving) <= set(kept.wanted)
