"""Properties of schedule() over random fleets (hypothesis, modest budgets)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane.scheduler import (
    DRA,
    Cluster,
    Current,
    PoolFill,
    schedule,
)
from modelplane.scheduler.capacity import place_groups

from tests.scheduler.builders import (
    CLASSES,
    FakeMatcher,
    _alloc,
    _cluster,
    _fleet,
    _pool,
)
from tests.scheduler.strategies import deployments

SETTINGS = settings(max_examples=150, deadline=None)


@st.composite
def pools(draw, cluster: int):
    names = draw(st.lists(st.sampled_from(sorted(CLASSES)), min_size=1, max_size=3, unique=True))
    out = []
    for name in names:
        nodes = draw(st.integers(0, 4))
        per_node = next(d.count for d in CLASSES[name].devices if d.claim == DRA)
        # At most one pod per node of other deployments: these always fit, so any overcommit is ours.
        allocs = [
            _alloc(f"o/r{cluster}-{name}-{k}", f"2024-0{k + 1}/o/r/{k:05d}", "o/r", gpus=draw(st.integers(1, per_node)))
            for k in range(draw(st.integers(0, nodes)))
        ]
        out.append(_pool(name, nodes=nodes, allocations=allocs))
    return out


@st.composite
def fleets(draw):
    n = draw(st.integers(1, 5))
    return [
        _cluster(
            f"c{i}",
            pools=draw(pools(i)),
            ready=draw(st.booleans()) or draw(st.booleans()),
            labels={"tier": draw(st.sampled_from(["prod", "dev"]))},
        )
        for i in range(n)
    ]


def _check_no_overcommit(clusters: list[Cluster], got) -> None:
    """Independent arithmetic: per pool, devices used <= devices there; every
    pod fits a node; every gang fits the node count. Then a replay in
    admission order (others first: ours are admitted after them)."""
    ours: dict[tuple[str, str], list] = {}
    for p in got.placements:
        for pp in p.pods:
            ours.setdefault((p.cluster, pp.pool), []).extend(pp.pods)
    for c in clusters:
        fills = {}
        for pool in c.pools:
            klass = CLASSES[pool.class_name]
            dra = {d.name: d.count for d in klass.devices if d.claim == DRA}
            groups = [g for a in pool.allocations for g in a.pods] + ours.get((c.name, pool.name), [])
            for name, per_node in dra.items():
                assert sum(g.count * g.devices.get(name, 0) for g in groups) <= per_node * pool.nodes
            for g in groups:
                assert all(g.devices.get(n, 0) <= per for n, per in dra.items())
                assert not g.gang or g.count <= pool.nodes
            fills[pool.name] = PoolFill.empty(klass, pool.nodes)
        for pool in c.pools:
            for a in sorted(pool.allocations, key=lambda a: a.order):
                assert place_groups(fills, [(pool.name, a.pods)]) is not None
        for p in got.placements:
            if p.cluster == c.name:
                assert place_groups(fills, [(pp.pool, pp.pods) for pp in p.pods]) is not None


@SETTINGS
@given(fleets(), deployments())
def test_no_pool_is_overcommitted(clusters, d) -> None:
    got = schedule(d, _fleet(*clusters), matcher=FakeMatcher())
    _check_no_overcommit(clusters, got)
    assert len(got.placements) + len(got.unplaced) == d.replicas


@SETTINGS
@given(fleets(), deployments())
def test_every_placement_satisfies_every_selector(clusters, d) -> None:
    got = schedule(d, _fleet(*clusters), matcher=FakeMatcher())
    by_name = {c.name: c for c in clusters}
    check = FakeMatcher()
    for p in got.placements:
        cluster = by_name[p.cluster]
        assert cluster.ready and all(cluster.labels.get(k) == v for k, v in d.cluster_selector.items())
        classes = {pool.name: CLASSES[pool.class_name] for pool in cluster.pools}
        requests = [m.devices for _, m in d.members()]
        assert len(p.members) == len(requests)
        for member, reqs in zip(p.members, requests):
            devices = {dev.name: dev for dev in classes[member.pool].devices}
            assert [r.request for r in member.devices] == list(reqs)
            for r in member.devices:
                dev = devices[r.class_device]
                assert r.count <= dev.count
                assert all(check(s, dev.device).matched for s in r.request.selectors)


@SETTINGS
@given(fleets(), deployments(), st.randoms(use_true_random=False))
def test_same_input_same_output_whatever_the_listing_order(clusters, d, rnd: random.Random) -> None:
    first = schedule(d, _fleet(*clusters), matcher=FakeMatcher())
    shuffled = list(clusters)
    rnd.shuffle(shuffled)
    assert schedule(d, _fleet(*shuffled), matcher=FakeMatcher()) == first


@SETTINGS
@given(fleets(), deployments(), st.integers(1, 4))
def test_unrelated_clusters_do_not_move_placed_replicas(clusters, d, extra) -> None:
    first = schedule(d, _fleet(*clusters), matcher=FakeMatcher())
    unrelated = [
        _cluster(f"x{i}", ready=False) if i % 3 == 0 else
        _cluster(f"x{i}", taints=[("m", "", "NoSchedule")]) if i % 3 == 1 else
        _cluster(f"x{i}", pools=[_pool("l4", nodes=0)])  # no node: nothing fits
        for i in range(extra)
    ]
    again = schedule(d, _fleet(*clusters, *unrelated), matcher=FakeMatcher())
    assert again.placements == first.placements


@SETTINGS
@given(fleets(), deployments())
def test_a_schedule_fed_back_is_a_fixed_point(clusters, d) -> None:
    first = schedule(d, _fleet(*clusters), matcher=FakeMatcher())
    current = tuple(Current(p.index, p.cluster, tuple(m.pool for m in p.members), p.order) for p in first.placements)
    # Better clusters appear: placed replicas still stay.
    better = [_cluster("a-new", pools=[_pool(name, nodes=8) for name in sorted(CLASSES)], labels={"tier": "prod"})]
    again = schedule(d, _fleet(*clusters, *better), current, matcher=FakeMatcher())
    kept = {p.index: p.cluster for p in again.placements if p.state == "Kept"}
    assert kept == {p.index: p.cluster for p in first.placements}
