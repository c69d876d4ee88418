"""A class edit under running replicas: selectors that no longer match hold, counts that shrink evict.

The case that matters: an H100 class corrected from the marketing ``80Gi`` to what NVIDIA's DRA
driver publishes (``81559Mi``, less than 80Gi = 81920Mi) while a deployment selects
``memory >= 80Gi``. Its running replicas keep their devices (DRA never re-evaluates an allocated
claim), so the fleet scheduler keeps them too and says why, instead of evicting them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from modelplane.cel import Device
from modelplane.scheduler import (
    HELD,
    KEPT,
    ClassDevice,
    Current,
    InferenceClass,
    PodGroup,
    PoolPlacement,
    schedule,
)

from tests.scheduler.builders import (
    CLASSES,
    FakeMatcher,
    _alloc,
    _class,
    _cluster,
    _deployment,
    _dev,
    _engine,
    _fleet,
    _pool,
    _standalone,
    where,
)

MEM80 = _deployment(engines=[_engine(members=[_standalone(8, "mem >= 80")])])
# What the driver publishes for the same GPU: a little less than the marketing figure.
CORRECTED = {**CLASSES, "a100": _class("a100", _dev(count=8, mem=79))}
OVERCOMMITTED = "overcommitted: no longer fits behind replicas admitted earlier"


def _running(index: int, cluster: str, pool: str = "a100", d=MEM80, pods=((8, 1),)) -> Current:
    """A replica of ``d`` as observed: its pool and the pods its ModelReplica's spec.placement lists."""
    groups = tuple(PodGroup(n, {"gpu": g}) for g, n in pods)
    return Current(index, cluster, (pool,), d.order(index), pods=(PoolPlacement(pool, groups),))


@dataclass(frozen=True)
class Case:
    name: str
    deployment: object
    classes: dict
    current: tuple
    state: str | None  # the replica's placement state, None when it is evicted
    evicted: str = ""  # the eviction reason, when evicted
    clusters: tuple = (_cluster("a", pools=[_pool(nodes=1)]),)


CASES = [
    Case("selectors still match: kept", MEM80, CLASSES, (_running(0, "a"),), KEPT),
    Case("memory corrected below the selector: held, not evicted", MEM80, CORRECTED, (_running(0, "a"),), HELD),
    Case("a selector that errors on the new class holds too",
         _deployment(engines=[_engine(members=[_standalone(8, "boom")])]), CORRECTED,
         (_running(0, "a", d=_deployment(engines=[_engine(members=[_standalone(8, "boom")])])),), HELD),
    Case("the pool now names another class that fails the selector: held", MEM80, CLASSES,
         (_running(0, "a"),), HELD, clusters=(_cluster("a", pools=[_pool("a100", cls="h100-small", nodes=1)]),)),
    Case("fewer devices per node than each pod takes: evicted", MEM80,
         {**CLASSES, "a100": _class("a100", _dev(count=4, mem=80))}, (_running(0, "a"),), None,
         'pool a100 no longer matches request "gpu" (device gpu: count 8 > 4 per node)'),
    Case("held on a mismatch, but overcommitted by an earlier admission: evicted", MEM80, CORRECTED,
         (_running(0, "a"),), None, OVERCOMMITTED,
         clusters=(_cluster("a", pools=[_pool(nodes=1, allocations=[_alloc(gpus=8)])]),)),
    Case("the pool is gone: evicted whatever its class", MEM80, CORRECTED,
         (_running(0, "a", pool="gone"),), None, "pool gone no longer exists"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_class_edit_holds_or_evicts(case: Case) -> None:
    classes = {**case.classes, "h100-small": _class("h100-small", _dev(count=8, mem=79, arch="Hopper"))}
    got = schedule(case.deployment, _fleet(*case.clusters, classes=classes), case.current, matcher=FakeMatcher())
    if case.state is None:
        assert [(e.index, e.reason) for e in got.evicted] == [(0, case.evicted)]
        assert all(p.cluster != "a" for p in got.placements)
    else:
        assert got.evicted == () and got.removed == ()
        assert [(p.index, p.cluster, p.state) for p in got.placements] == [(0, "a", case.state)]


def test_the_held_replica_is_reported_with_pool_class_request_selector_and_fix() -> None:
    got = schedule(MEM80, _fleet(_cluster("a", pools=[_pool(nodes=1)]), classes=CORRECTED), (_running(0, "a"),),
                   matcher=FakeMatcher())
    [p] = got.placements
    why = ('pool a100 of class a100 no longer matches request "gpu" (device gpu: selector 1 false: mem >= 80); '
           "it keeps running on the devices it holds, new replicas are not placed there: "
           "update the selector or the class")
    assert p.held_because == why
    assert got.message == f"1/1 replicas placed; replica 0 held on a ({why})"
    # What it holds is what was observed: the ModelReplica is kept as it is.
    assert p.pods == _running(0, "a").pods
    assert [(m.pool, m.devices) for m in p.members] == [("a100", ())]


def test_a_held_replica_still_takes_its_capacity_and_new_replicas_go_elsewhere() -> None:
    # Two 8-GPU nodes on a; the held replica holds one. Scaling to 3: nothing new lands on
    # a's mismatched pool, b takes one, and the third has nowhere to go.
    fleet = _fleet(_cluster("a", pools=[_pool(nodes=2)]), _cluster("b", pools=[_pool("h200", nodes=1)]),
                   classes=CORRECTED)
    got = schedule(replace(MEM80, replicas=3), fleet, (_running(0, "a"),), matcher=FakeMatcher())
    assert where(got) == {0: "a", 1: "b"}
    assert [p.state for p in got.placements] == [HELD, "New"]
    [u] = got.unplaced
    assert u.reasons["a"] == 'no pool has a device matching request "gpu" (a100: device gpu: selector 1 false)'


def test_a_held_replica_counts_in_the_fill_other_members_plan_on() -> None:
    # Member 0 wants mem >= 80 (a100 no longer, h200 yes), member 1 a Hopper (h200). The held
    # replica's pods are replayed, so one h200 node of two is taken: a second replica needs both.
    d = _deployment(replicas=2, engines=[_engine(members=[_standalone(8, "mem >= 80")]),
                                         _engine("f", members=[_standalone(8, "arch == Hopper")])])
    held = Current(0, "a", ("a100", "h200"), d.order(0),
                   pods=(PoolPlacement("a100", (PodGroup(1, {"gpu": 8}),)), PoolPlacement("h200", (PodGroup(1, {"gpu": 8}),))))
    classes = {**CORRECTED, "h200": _class("h200", _dev(count=8, mem=141, arch="Hopper"))}
    fleet = _fleet(_cluster("a", pools=[_pool("a100", nodes=2), _pool("h200", nodes=2)]), classes=classes)
    got = schedule(d, fleet, (held,), matcher=FakeMatcher())
    assert [(p.index, p.state) for p in got.placements] == [(0, HELD)]
    assert got.evicted == ()
    [u] = got.unplaced
    assert u.reasons["a"] == "f/Standalone: pool h200 has room for 0 of 1 pods (8 gpu each)"
    # With a100 matching again, member 0 goes back there and the free h200 node takes member 1.
    fleet = replace(fleet, classes={**classes, "a100": CLASSES["a100"]})
    got = schedule(d, fleet, (held,), matcher=FakeMatcher())
    assert [(p.index, p.state) for p in got.placements] == [(0, KEPT), (1, "New")]


def test_without_observed_pods_a_mismatched_replica_is_held_untouched() -> None:
    bare = Current(0, "a", ("a100",), MEM80.order(0))
    got = schedule(MEM80, _fleet(_cluster("a"), classes=CORRECTED), (bare,), matcher=FakeMatcher())
    assert [(p.state, p.pods) for p in got.placements] == [(HELD, ())]
    assert got.evicted == ()


def test_extras_are_not_matched_again() -> None:
    # An outdated revision's replica is not this revision's: a class edit alone never evicts it.
    extra = replace(_running(0, "a"), extra=True)
    got = schedule(replace(MEM80, replicas=0), _fleet(_cluster("a"), classes=CORRECTED), (extra,),
                   matcher=FakeMatcher())
    assert [(p.index, p.state) for p in got.extras] == [(0, KEPT)] and got.evicted == ()


# --- the same with the real CEL matcher and the driver's own figures ----------------------------

def _h100(memory: str) -> InferenceClass:
    gpu = {"name": "gpu", "driver": "gpu.nvidia.com",
           "attributes": {"productName": {"string": "NVIDIA H100 80GB HBM3"}}, "capacity": {"memory": {"value": memory}}}
    return InferenceClass("h100", (ClassDevice("gpu", Device.from_class_device(gpu), 8, "DRA", "gpu.nvidia.com"),))


def _selecting(size: str):
    expr = f'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("{size}")) >= 0'
    return _deployment(engines=[_engine(members=[_standalone(8, expr)])])


@pytest.mark.parametrize(("selects", "memory", "state"), [
    ("80Gi", "80Gi", KEPT),
    ("80Gi", "81559Mi", HELD),    # the class corrected first: held, not evicted
    ("79Gi", "81559Mi", KEPT),    # then the selector's margin: kept, nothing to report
    ("79Gi", "80Gi", KEPT),       # selectors first, then the class: nothing ever moves
])
def test_the_h100_memory_correction(selects: str, memory: str, state: str) -> None:
    d = _selecting(selects)
    fleet = _fleet(_cluster("a", pools=[_pool("h100", nodes=1)]), classes={"h100": _h100(memory)})
    got = schedule(d, fleet, (_running(0, "a", pool="h100", d=d),))  # default matcher: modelplane.cel
    assert [(p.index, p.cluster, p.state) for p in got.placements] == [(0, "a", state)]
    assert got.evicted == () and got.unplaced == ()
    if state == HELD:
        assert 'quantity("80Gi")' in (got.placements[0].held_because or "")
