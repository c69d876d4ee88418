"""The per-cluster signature and the shortcuts built on it (signature.py,
filters.quick_pass, plan.quick_state) change nothing: a schedule is the
same with them as without them, whatever the fleet, and one deployment's
allocations never leak into another's view through a cached signature."""

from __future__ import annotations

import dataclasses
import gc
from contextlib import contextmanager
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane.scheduler import Current, Toleration, core, schedule
from modelplane.scheduler.signature import signature

from tests.scheduler.builders import (
    CLASSES,
    FakeMatcher,
    _alloc,
    _cluster,
    _current,
    _deployment,
    _fleet,
    _pool,
)
from tests.scheduler.strategies import deployments

SETTINGS = settings(max_examples=150, deadline=None)
OWN = "ml/d"  # the builders' deployment key


@contextmanager
def plain():
    """Every cluster through ``run_filters``, ``empty_state`` and ``replay``."""
    with mock.patch.object(core, "quick_pass", lambda *a: False), mock.patch.object(core, "quick_state", lambda *a: None):
        yield


@st.composite
def fleets(draw):
    """Like test_properties' fleets, plus what the shortcuts must step
    aside for or get right: taints, no pools reported, the deployment's own
    allocations (some of its replicas terminating), two pools with one
    name, allocations listed out of admission order, gangs."""
    out = []
    for i in range(draw(st.integers(1, 6))):
        pools = []
        names = draw(st.lists(st.sampled_from(sorted(CLASSES)), min_size=1, max_size=3))  # may repeat
        for k, klass in enumerate(names):
            nodes = draw(st.integers(0, 4))
            per_node = next(d.count for d in CLASSES[klass].devices if d.claim == "DRA")
            allocs = []
            for j in range(draw(st.integers(0, 3))):
                who = draw(st.sampled_from(["o/r", "o/s", OWN]))
                gang = draw(st.booleans())
                allocs.append(_alloc(f"{who}-{i}-{k}-{j}", f"2024-0{draw(st.integers(1, 3))}/{who}/{j:05d}", who,
                                     pods=draw(st.integers(1, 2)), gpus=draw(st.integers(1, per_node)), gang=gang))
            pools.append(_pool(klass, nodes=nodes, allocations=allocs))
        state = draw(st.sampled_from(["ok", "ok", "ok", "tainted", "prefer", "unknown", "down"]))
        out.append(_cluster(
            f"c{i}",
            pools="unknown" if state == "unknown" else pools,
            ready=state != "down",
            labels={"tier": draw(st.sampled_from(["prod", "dev"]))},
            taints=[("m", "", "NoSchedule")] if state == "tainted" else
                   [("p", "", "PreferNoSchedule")] if state == "prefer" else [],
        ))
    return out


@SETTINGS
@given(fleets(), deployments(), st.booleans(), st.booleans(), st.booleans())
def test_the_shortcuts_change_nothing(clusters, d, tolerate, cache, again) -> None:
    if tolerate:
        d = dataclasses.replace(d, tolerations=(Toleration("m", "Exists"),))
    ready = None
    if cache:
        d = dataclasses.replace(d, cache="c")
        ready = {c.name: i % 2 == 0 for i, c in enumerate(clusters[1:])}
    fleet = _fleet(*clusters, cache_ready=ready)
    with plain():
        want = schedule(d, fleet, matcher=FakeMatcher())
    assert schedule(d, fleet, matcher=FakeMatcher()) == want
    # Placed replicas fed back: clusters where they stay take the keep phase's fill.
    current = tuple(Current(p.index, p.cluster, tuple(m.pool for m in p.members), p.order) for p in want.placements)
    grown = dataclasses.replace(d, replicas=d.replicas + 2)
    with plain():
        want2 = schedule(grown, fleet, current, matcher=FakeMatcher())
    if again:  # signatures cached by the first calls
        assert schedule(grown, fleet, current, matcher=FakeMatcher()) == want2
    assert schedule(grown, fleet, current, matcher=FakeMatcher()) == want2


def test_a_cached_signature_never_shows_one_deployment_its_own_allocations() -> None:
    # One Cluster object, shared by both deployments: ml/d fills its only node.
    full = _cluster("a", pools=[_pool("a100", nodes=1, allocations=[_alloc("ml/d-0", "2024/ml/d/00000", OWN)])])
    other = _deployment(1, name="e")
    first = schedule(other, _fleet(full), matcher=FakeMatcher())
    assert first.unplaced and first.unplaced[0].reasons == {"a": "pool a100 has room for 0 of 1 pods (1 gpu each)"}
    # ml/d's own allocation is left out of its view (its replicas are accounted
    # from the observed ones), although the signature was built for ml/e.
    own = schedule(_deployment(1), _fleet(full), matcher=FakeMatcher())
    assert [p.cluster for p in own.placements] == ["a"]
    # And ml/d's call does not change what ml/e sees next.
    assert schedule(other, _fleet(full), matcher=FakeMatcher()) == first


def test_equal_pools_of_different_clusters_are_one_signature() -> None:
    a = _cluster("a", pools=[_pool("a100", nodes=2, allocations=[_alloc()]), _pool("l4", nodes=1)])
    b = _cluster("b", pools=[_pool("a100", nodes=2, allocations=[_alloc()]), _pool("l4", nodes=2)])
    sa, sb = signature(a), signature(b)
    assert sa.pools[0] is sb.pools[0]
    assert sa.pools[1] is not sb.pools[1]
    assert signature(a) is sa  # kept while the object lives
    assert sa.deployments == frozenset({"other/r"}) and sa.classes == frozenset({"a100", "l4"})


def test_allocations_are_kept_in_admission_order_whatever_the_listing_order() -> None:
    late = _alloc("o/r-1", "2024-02/o/r/00001", gpus=2)
    early = _alloc("o/r-0", "2024-01/o/r/00000", gpus=3)
    sig = signature(_cluster("a", pools=[_pool("a100", allocations=[late, early])]))
    assert [a[0][1] for a in sig.pools[0].allocations] == [(("gpu", 3),), (("gpu", 2),)]


def test_a_signature_is_forgotten_with_its_cluster() -> None:
    from modelplane.scheduler import signature as module

    c = _cluster("gone", pools=[_pool("a100", nodes=3)])
    signature(c)
    key = id(c)
    assert key in module._by_id
    del c
    gc.collect()
    assert key not in module._by_id


def test_a_deployment_without_members_plans_the_same() -> None:
    d = _deployment(2, engines=[])
    fleet = _fleet(_cluster("a", pools=[_pool("l4", nodes=1)]), _cluster("b", pools=[_pool("a100", nodes=1)]))
    with plain():
        want = schedule(d, fleet, matcher=FakeMatcher())
    assert schedule(d, fleet, matcher=FakeMatcher()) == want


def test_two_pools_with_one_name_take_the_plain_path() -> None:
    # A malformed status: the plain path replays both pools' allocations
    # into the fill of the last one; the shortcut must not differ.
    twice = _cluster("a", pools=[_pool("a100", nodes=1, allocations=[_alloc(gpus=8)]), _pool("a100", nodes=1)])
    fleet = _fleet(twice)
    with plain():
        want = schedule(_deployment(1), fleet, matcher=FakeMatcher())
    assert not signature(twice).unique_names
    assert schedule(_deployment(1), fleet, matcher=FakeMatcher()) == want


def test_of_two_clusters_with_one_name_the_last_listed_counts() -> None:
    # schedule() no longer sorts the listing before indexing it by name; the
    # stable sort it did left the last listed of equal names, as now.
    empty = _cluster("a", pools=[_pool("a100", nodes=0)])
    roomy = _cluster("a", pools=[_pool("a100", nodes=1)])
    assert [p.cluster for p in schedule(_deployment(1), _fleet(empty, roomy), matcher=FakeMatcher()).placements] == ["a"]
    assert not schedule(_deployment(1), _fleet(roomy, empty), matcher=FakeMatcher()).placements


def test_a_fill_rebuilt_for_binding_counts_the_replicas_held_there() -> None:
    # Replica 0 is held on "a" (its pool's class is not known yet): it counts
    # for spread on "a" when "a" is bound to, its fill rebuilt from the signature.
    # Packing prefers the small "a" on a spread tie; spread alone keeps 3 off it.
    fleet = _fleet(_cluster("a", pools=[_pool("a100", nodes=1), _pool("mystery", nodes=1)]),
                   _cluster("b", pools=[_pool("a100", nodes=4)]))
    d = _deployment(4)
    held = (_current(0, "a", "mystery", d=d),)
    with plain():
        want = schedule(d, fleet, held, matcher=FakeMatcher())
    got = schedule(d, fleet, held, matcher=FakeMatcher())
    assert got == want
    assert {p.index: (p.cluster, p.state) for p in got.placements} == {
        0: ("a", "Held"), 1: ("b", "New"), 2: ("a", "New"), 3: ("b", "New")}
