"""schedule() end to end: scoring, capacity, keep, scale, explanations."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from modelplane.scheduler import (
    HELD,
    KEPT,
    MOVED,
    NEW,
    Engine,
    Member,
    Toleration,
    device_dicts,
    placement_dicts,
    schedule,
)

from tests.scheduler.builders import (
    FakeMatcher,
    _alloc,
    _cluster,
    _current,
    _deployment,
    _engine,
    _fleet,
    _gang_engine,
    _pool,
    _request,
    _standalone,
    pools_of,
    where,
)


@dataclass(frozen=True)
class Case:
    name: str
    clusters: tuple
    want: dict  # index -> cluster
    deployment: object = None
    current: tuple = ()
    fleet: dict = field(default_factory=dict)


def _schedule(case: Case):
    d = case.deployment or _deployment()
    return schedule(d, _fleet(*case.clusters, **case.fleet), case.current, matcher=FakeMatcher())


def _one_gpu(replicas=1, *selectors):
    return _deployment(replicas, engines=[_engine(members=[_standalone(1, *selectors)])])


PLACEMENT = [
    Case("spread: two replicas take two identical clusters", (_cluster("a"), _cluster("b")), {0: "a", 1: "b"},
         _deployment(2)),
    Case("ties go to the first cluster by name", (_cluster("b"), _cluster("a")), {0: "a"}),
    Case("pack: the fuller cluster that still fits wins",
         (_cluster("a"), _cluster("b", pools=[_pool(allocations=[_alloc()])])), {0: "b"}),
    Case("spread beats pack: the second replica leaves the fuller cluster",
         (_cluster("a", pools=[_pool(nodes=4)]), _cluster("b", pools=[_pool(nodes=4, allocations=[_alloc(pods=2)])])),
         {0: "b", 1: "a"},
         _deployment(2, engines=[_engine(members=[_standalone(8)])])),
    Case("one 8-GPU node holds eight 1-GPU replicas, not nine", (_cluster("a", pools=[_pool(nodes=1)]),),
         {i: "a" for i in range(8)}, _one_gpu(9)),
    Case("gang pods need distinct nodes: one node is not enough", (_cluster("a", pools=[_pool(nodes=1)]),), {},
         _deployment(engines=[_gang_engine(count=4)])),
    Case("gang pods on two nodes fit", (_cluster("a", pools=[_pool(nodes=2)]),), {0: "a"},
         _deployment(engines=[_gang_engine(count=4)])),
    Case("plain pods share a node where a gang cannot", (_cluster("a", pools=[_pool(nodes=1)]),), {0: "a"},
         _deployment(engines=[_engine(members=[Member("Standalone", 2, (_request(4),))])])),
    Case("copies multiply demand: 3 copies do not fit 2 nodes", (_cluster("a", pools=[_pool(nodes=2)]),), {},
         _deployment(engines=[_engine(copies=3, members=[_standalone(8)])])),
    Case("copies multiply demand: 3 copies fit 3 nodes", (_cluster("a", pools=[_pool(nodes=3)]),), {0: "a"},
         _deployment(engines=[_engine(copies=3, members=[_standalone(8)])])),
    Case("gang copies each take their own nodes", (_cluster("a", pools=[_pool(nodes=3)]),), {},
         _deployment(engines=[_gang_engine(copies=2)])),
    Case("new replicas count every existing allocation, later ones too",
         (_cluster("a", pools=[_pool(nodes=1, allocations=[_alloc(order="2099-01-01T00:00:00Z/x/y/00000")])]),
          _cluster("b", pools=[_pool(nodes=1, allocations=[_alloc(gpus=4)])])), {0: "b"},
         _deployment(engines=[_engine(members=[_standalone(4)])])),
    Case("an overcommitted allocation of another deployment is not counted",
         (_cluster("a", pools=[_pool(nodes=1, allocations=[_alloc(), _alloc("o/z-0", "2021/o/z/00000", "o/z")])]),
          _cluster("b", pools=[_pool(nodes=2, allocations=[_alloc()])])), {0: "b"},
         _deployment(engines=[_engine(members=[_standalone(8)])])),
    Case("PreferNoSchedule pushes a replica elsewhere", (_cluster("a", taints=[("spot", "", "PreferNoSchedule")]), _cluster("b")),
         {0: "b"}),
    Case("PreferNoSchedule still takes a replica when nothing else fits",
         (_cluster("a", taints=[("spot", "", "PreferNoSchedule")]), _cluster("b", ready=False)), {0: "a"}),
    Case("cache Ready gates clusters", (_cluster("a"), _cluster("b")), {0: "b"}, _deployment(cache="c"),
         fleet={"cache_ready": {"a": False, "b": True}}),
    Case("clusterSelector gates clusters", (_cluster("a"), _cluster("b", labels={"tier": "prod"})), {0: "b"},
         _deployment(selector={"tier": "prod"})),
]


@pytest.mark.parametrize("case", PLACEMENT, ids=[c.name for c in PLACEMENT])
def test_placement(case: Case) -> None:
    assert where(_schedule(case)) == case.want


def test_tightest_pool_in_a_cluster_takes_a_small_job() -> None:
    c = _cluster("a", pools=[_pool("a100"), _pool("l4", nodes=1), _pool("l40s")])
    got = schedule(_one_gpu(1, "mem >= 20"), _fleet(c), matcher=FakeMatcher())
    assert pools_of(got, 0) == ("l4",)


def test_tight_fit_counts_what_is_already_on_the_node() -> None:
    # The a100 node has 7 GPUs taken: one more leaves 0 spare, tighter than an empty l40s node (3 spare).
    c = _cluster("a", pools=[_pool("a100", nodes=1, allocations=[_alloc(gpus=7)]), _pool("l40s", nodes=1)])
    got = schedule(_one_gpu(1, "mem >= 40"), _fleet(c), matcher=FakeMatcher())
    assert pools_of(got, 0) == ("a100",)


def test_prefill_decode_pair_lands_on_one_cluster_with_pools_per_member() -> None:
    d = _deployment(
        mode="PrefillDecode",
        engines=[
            _engine("prefill", phase="Prefill", members=[_standalone(8, "mem >= 100")]),
            _engine("decode", phase="Decode", members=[_standalone(8, "arch == Ampere")]),
        ],
    )
    fleet = _fleet(_cluster("x", pools=[_pool("h200")]), _cluster("y", pools=[_pool("a100")]),
                   _cluster("z", pools=[_pool("a100"), _pool("h200")]))
    got = schedule(d, fleet, matcher=FakeMatcher())
    assert where(got) == {0: "z"}
    assert pools_of(got, 0) == ("h200", "a100")


def test_synthetic_devices_must_be_present() -> None:
    d = _deployment(engines=[_engine(members=[_standalone(devices=[_request(8), _request(1, "driver == nic.nvidia.com", name="nic")])])])
    got = schedule(d, _fleet(_cluster("a", pools=[_pool("a100")]), _cluster("b", pools=[_pool("h100")])), matcher=FakeMatcher())
    assert where(got) == {0: "b"}
    assert [(r.request.name, r.class_device, r.claim) for r in got.placements[0].members[0].devices] == [
        ("gpu", "gpu", "DRA"), ("nic", "nic", "Synthetic")]


def test_synthetic_devices_are_not_consumed() -> None:
    # One h100 node has one NIC; two 4-GPU pods both ask for it and both fit.
    d = _deployment(2, engines=[_engine(members=[_standalone(devices=[_request(4), _request(1, "driver == nic.nvidia.com", name="nic")])])])
    got = schedule(d, _fleet(_cluster("a", pools=[_pool("h100", nodes=1)])), matcher=FakeMatcher())
    assert where(got) == {0: "a", 1: "a"}
    assert placement_dicts(got.placements[0]) == [{"pool": "h100", "pods": [{"count": 1, "devices": {"gpu": 4}, "gang": False}]}]


def test_gang_placement_is_one_gang_group_per_copy() -> None:
    d = _deployment(engines=[_gang_engine(workers=2, copies=2)])
    got = schedule(d, _fleet(_cluster("a", pools=[_pool(nodes=6)])), matcher=FakeMatcher())
    assert placement_dicts(got.placements[0]) == [{"pool": "a100", "pods": [
        {"count": 3, "devices": {"gpu": 8}, "gang": True}, {"count": 3, "devices": {"gpu": 8}, "gang": True}]}]


def test_new_replicas_get_admission_keys_from_creation_and_index() -> None:
    got = schedule(_deployment(2), _fleet(_cluster("a"), _cluster("b")), matcher=FakeMatcher())
    assert [p.order for p in got.placements] == ["2025-01-01T00:00:00Z/ml/d/00000", "2025-01-01T00:00:00Z/ml/d/00001"]
    assert [p.state for p in got.placements] == [NEW, NEW]


def test_resolved_devices_render_as_the_replica_spec() -> None:
    got = schedule(_one_gpu(1, "mem >= 40"), _fleet(_cluster("a")), matcher=FakeMatcher())
    assert device_dicts(got.placements[0].members[0]) == [
        {"name": "gpu", "count": 1, "claim": "DRA", "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": "mem >= 40"}]}]


# --- keep ---------------------------------------------------------------------


@dataclass(frozen=True)
class KeepCase:
    name: str
    clusters: tuple
    current: tuple
    want: dict  # index -> (cluster, state)
    deployment: object = None
    known: bool = True


_TOLERATE_EVICT = _deployment(tolerations=[Toleration("evict", "Exists")])

KEEP = [
    KeepCase("a placed replica stays though a better cluster appears", (_cluster("a"), _cluster("b", pools=[_pool(nodes=9)])),
             (_current(0, "b"),), {0: ("b", KEPT)}),
    KeepCase("NoSchedule does not drain", (_cluster("a"), _cluster("b", taints=[("m", "", "NoSchedule")])),
             (_current(0, "b"),), {0: ("b", KEPT)}),
    KeepCase("not ready holds: nothing is judged on a cluster that may report no nodes for a while",
             (_cluster("a"), _cluster("b", ready=False, pools=[_pool(nodes=0)])), (_current(0, "b"),), {0: ("b", HELD)}),
    KeepCase("NoExecute drains a replica that does not tolerate it",
             (_cluster("a"), _cluster("b", taints=[("evict", "", "NoExecute")])), (_current(0, "b"),), {0: ("a", MOVED)}),
    KeepCase("NoExecute keeps a replica that tolerates it", (_cluster("a"), _cluster("b", taints=[("evict", "", "NoExecute")])),
             (_current(0, "b", d=_TOLERATE_EVICT),), {0: ("b", KEPT)}, _TOLERATE_EVICT),
    KeepCase("a deleted cluster's replica moves", (_cluster("a"),), (_current(0, "gone"),), {0: ("a", MOVED)}),
    KeepCase("clusters not fetched: everything held, nothing new", (), (_current(0, "b"),), {0: ("b", HELD)},
             _deployment(2), known=False),
    KeepCase("a cluster without published pools holds its replica", (_cluster("a"), _cluster("b", pools="unknown")),
             (_current(0, "b"),), {0: ("b", HELD)}),
    KeepCase("a removed pool moves the replica", (_cluster("a"), _cluster("b", pools=[_pool("h200")])),
             (_current(0, "b", "a100"),), {0: ("a", MOVED)}),
    KeepCase("overcommitted by an earlier admission: the later replica moves",
             (_cluster("a"), _cluster("b", pools=[_pool(nodes=1, allocations=[_alloc(gpus=8)])])),
             (_current(0, "b"),), {0: ("a", MOVED)}),
    KeepCase("an allocation admitted later does not move an earlier replica",
             (_cluster("a"), _cluster("b", pools=[_pool(nodes=1, allocations=[_alloc(order="2099/o/r/00000")])])),
             (_current(0, "b"),), {0: ("b", KEPT)}),
    KeepCase("own replicas are admitted by index: the later one moves when a node goes",
             (_cluster("a"), _cluster("b", pools=[_pool(nodes=1)])), (_current(1, "b"), _current(0, "b")),
             {0: ("b", KEPT), 1: ("a", MOVED)}, _deployment(2, engines=[_engine(members=[_standalone(8)])])),
    KeepCase("own entries in pool allocations are ignored in favour of current",
             (_cluster("b", pools=[_pool(nodes=1, allocations=[_alloc("ml/d-0-b", "2025-01-01T00:00:00Z/ml/d/00000", "ml/d")])]),),
             (_current(0, "b"),), {0: ("b", KEPT)}),
    KeepCase("scale-up adds the lowest unused index", (_cluster("a"), _cluster("b"), _cluster("c")),
             (_current(0, "a"), _current(2, "b")), {0: ("a", KEPT), 1: ("c", NEW), 2: ("b", KEPT)}, _deployment(3)),
    KeepCase("scale-down drops the highest index of the most loaded cluster", (_cluster("a"), _cluster("b")),
             (_current(0, "a"), _current(1, "a"), _current(2, "b")), {0: ("a", KEPT), 2: ("b", KEPT)}, _deployment(2)),
    KeepCase("scale-down with an even spread drops the highest index", (_cluster("a"), _cluster("b")),
             (_current(0, "a"), _current(1, "b"), _current(2, "a"), _current(3, "b")), {0: ("a", KEPT), 1: ("b", KEPT)},
             _deployment(2)),
    KeepCase("scale-down drops a replica that must move first",
             (_cluster("a"), _cluster("b", taints=[("evict", "", "NoExecute")])),
             (_current(0, "b"), _current(1, "a"), _current(2, "a")), {1: ("a", KEPT), 2: ("a", KEPT)}, _deployment(2)),
    KeepCase("a duplicate index keeps the first cluster by name", (_cluster("a"), _cluster("b")),
             (_current(0, "b"), _current(0, "a")), {0: ("a", KEPT)}),
]


@pytest.mark.parametrize("case", KEEP, ids=[c.name for c in KEEP])
def test_keep(case: KeepCase) -> None:
    d = case.deployment or _deployment()
    got = schedule(d, _fleet(*case.clusters, known=case.known), case.current, matcher=FakeMatcher())
    assert {p.index: (p.cluster, p.state) for p in got.placements} == case.want


def test_moved_replica_says_where_from_and_why() -> None:
    got = schedule(_deployment(), _fleet(_cluster("a"), _cluster("b", taints=[("evict", "", "NoExecute")])),
                   (_current(0, "b"),), matcher=FakeMatcher())
    p = got.placements[0]
    assert (p.moved_from, p.moved_because, p.order) == ("b", "NoExecute taint evict", "2025-01-01T00:00:00Z/ml/d/00000")
    assert got.message == "1/1 replicas placed; replica 0 moved from b to a: NoExecute taint evict"


def test_kept_replica_keeps_its_observed_order() -> None:
    got = schedule(_deployment(), _fleet(_cluster("a")), (_current(0, "a", order="2024/ml/d/00000"),), matcher=FakeMatcher())
    assert got.placements[0].order == "2024/ml/d/00000"


# --- explanations -----------------------------------------------------------------


def test_unplaced_replica_gets_a_reason_per_cluster_sorted() -> None:
    d = _deployment(engines=[_engine(members=[_standalone(8, "mem >= 40")])])
    fleet = _fleet(
        _cluster("prod-c", pools=[_pool("h100", nodes=1, allocations=[_alloc()])]),
        _cluster("prod-a", pools=[_pool("l4")]),
        _cluster("prod-b", taints=[("maintenance", "true", "NoSchedule")]),
    )
    got = schedule(d, fleet, matcher=FakeMatcher())
    assert got.placements == ()
    (u,) = got.unplaced
    assert u.message == (
        '0/3 clusters fit: prod-a: no pool has a device matching request "gpu" (l4: device gpu: selector 1 false); '
        "prod-b: NoSchedule taint maintenance=true; prod-c: pool h100 has room for 0 of 1 pods (8 gpu each)"
    )
    assert sorted(u.reasons) == ["prod-a", "prod-b", "prod-c"]
    assert got.message == "0/1 replicas placed; replica 0: " + u.message


def test_gang_capacity_reason_counts_nodes() -> None:
    d = _deployment(engines=[_gang_engine(workers=2)])
    got = schedule(d, _fleet(_cluster("a", pools=[_pool(nodes=4, allocations=[_alloc(pods=2, gang=True)])])), matcher=FakeMatcher())
    assert got.unplaced[0].reasons == {"a": "pool a100 has 2/4 nodes with 8 gpu free, gang needs 3"}


def test_explanation_is_capped_and_counts_the_rest_by_filter() -> None:
    clusters = [_cluster(f"c{i:02d}", ready=False) for i in range(12)] + [_cluster("z", pools=[_pool("l4")])]
    got = schedule(_deployment(engines=[_engine(members=[_standalone(8)])]), _fleet(*clusters), matcher=FakeMatcher())
    msg = got.unplaced[0].message
    assert msg.startswith("0/13 clusters fit: c00: not ready; c01: not ready;")
    assert msg.endswith("c09: not ready; and 3 more: 2 ClusterReady, 1 DeviceMatch")


def test_replicas_with_the_same_story_are_reported_once() -> None:
    got = schedule(_deployment(3), _fleet(_cluster("a"), _cluster("b", ready=False)),
                   matcher=FakeMatcher())
    # Replica 0 takes a; 1 and 2 fit a too (8 GPUs x 2 nodes), so use one node-sized member instead.
    assert where(got) == {0: "a", 1: "a", 2: "a"}
    got = schedule(_deployment(3, engines=[_engine(members=[_standalone(8)])]), _fleet(_cluster("a", pools=[_pool(nodes=1)])),
                   matcher=FakeMatcher())
    assert got.message == "1/3 replicas placed; replicas 1, 2: 0/1 clusters fit: a: pool a100 has room for 0 of 1 pods (8 gpu each)"


def test_leaving_replica_with_nowhere_to_go_says_both() -> None:
    got = schedule(_deployment(), _fleet(_cluster("b", taints=[("evict", "", "NoExecute")])), (_current(0, "b"),),
                   matcher=FakeMatcher())
    assert got.message == "0/1 replicas placed; replica 0: left b (NoExecute taint evict); 0/1 clusters fit: b: NoExecute taint evict"


def test_held_replicas_are_reported() -> None:
    got = schedule(_deployment(2), _fleet(known=False), (_current(0, "b"),), matcher=FakeMatcher())
    assert got.message == "1/2 replicas placed; replica 0 held on b (not observed yet); replica 1: InferenceClusters not observed yet"
    got = schedule(_deployment(), _fleet(_cluster("b", ready=False)), (_current(0, "b"),), matcher=FakeMatcher())
    assert got.message == "1/1 replicas placed; replica 0 held on b (not Ready)"
    assert got.evicted == () and got.removed == ()


def test_no_clusters_at_all() -> None:
    got = schedule(_deployment(), _fleet(), matcher=FakeMatcher())
    assert got.unplaced[0].message == "0/0 clusters fit: no InferenceClusters"


def test_gang_leader_and_worker_with_different_devices_split_groups() -> None:
    e = Engine("e", 1, None, (Member("Leader", 1, (_request(2),)), Member("Worker", 1, (_request(8),))))
    got = schedule(_deployment(engines=[e]), _fleet(_cluster("a", pools=[_pool(nodes=2)])), matcher=FakeMatcher())
    assert placement_dicts(got.placements[0]) == [{"pool": "a100", "pods": [
        {"count": 1, "devices": {"gpu": 2}, "gang": True}, {"count": 1, "devices": {"gpu": 8}, "gang": True}]}]


# --- scores -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "raw", "lower_is_better", "want"),
    [
        ("lowest raw scores 100", {"a": 0, "b": 5, "c": 10}, True, {"a": 100.0, "b": 50.0, "c": 0.0}),
        ("highest raw scores 100", {"a": 0, "b": 10}, False, {"a": 0.0, "b": 100.0}),
        ("all equal all best", {"a": 3, "b": 3}, True, {"a": 100.0, "b": 100.0}),
        ("nothing to score", {}, True, {}),
    ],
)
def test_normalize(name, raw, lower_is_better, want) -> None:
    from modelplane.scheduler import normalize

    assert normalize(raw, lower_is_better) == want


def test_heap_selection_agrees_with_the_normalised_ranking() -> None:
    from modelplane.scheduler import Matches
    from modelplane.scheduler.plan import empty_state, plan_replica, replay
    from modelplane.scheduler.scores import rank, select_key

    d = _one_gpu(1)
    clusters = [
        _cluster("a", pools=[_pool(nodes=3)]),
        _cluster("b", pools=[_pool(nodes=2, allocations=[_alloc(gpus=6)])]),
        _cluster("c", pools=[_pool(nodes=1)], taints=[("spot", "", "PreferNoSchedule")]),
        _cluster("d", pools=[_pool("l4", nodes=1)]),
    ]
    fleet = _fleet(*clusters)
    m = Matches(d, fleet.classes, FakeMatcher())
    feasible = {}
    for c in clusters:
        s = empty_state(c, fleet.classes, m)
        replay(s, d.key, ())
        feasible[c.name] = (s, plan_replica(d, s, m))
    ranked = rank(d, feasible)
    by_key = sorted(feasible, key=lambda n: (select_key(d, *feasible[n]), n))
    assert [n for n, _ in ranked] == by_key == ["d", "b", "a", "c"]
    assert ranked[0][1] == (100.0, 100.0, 100.0)
