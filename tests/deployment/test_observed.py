"""observed: the deployment's own children, each ModelReplica paired with its
ModelEndpoint, and the annotations that carry state between calls.

Resource names carry index and cluster; a replica is ready when it says so
or is Ready; available when ready and its endpoint's Backend is published;
anything that is not one of our ModelReplicas is ignored, and an endpoint
without its replica is an orphan.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from modelplane.deployment.observed import (
    Child,
    child_index,
    endpoint_resource,
    endpoint_routed,
    placement,
    read,
    replica_ready,
    replica_resource,
)
from modelplane.scheduler import Current, PodGroup, PoolPlacement

from tests.deployment.builders import NAME, NS, child, endpoint_obj, order, replica_obj


def test_resource_names_carry_index_and_cluster() -> None:
    assert replica_resource(3, "us-east") == "replica-3-us-east"
    assert endpoint_resource(3, "us-east") == "endpoint-3-us-east"
    assert child_index(replica_resource(12, "a-b-c")) == 12
    assert child_index(endpoint_resource(0, "a")) == 0


@pytest.mark.parametrize("name", ["cache", "replica-x-a", "replica-1-", "replica-1", "Replica-1-a", "pod-1-a",
                                  "xreplica-1-a"])
def test_other_names_are_not_ours(name: str) -> None:
    assert child_index(name) is None


@dataclass(frozen=True)
class Ready:
    name: str
    obj: Any
    want: bool


READY = [
    Ready("not observed", None, False),
    Ready("empty", {}, False),
    Ready("no status", {"kind": "ModelReplica"}, False),
    Ready("status.ready true", {"status": {"ready": True}}, True),
    Ready("status.ready false", {"status": {"ready": False}}, False),
    Ready("status.ready must be a boolean", {"status": {"ready": "true"}}, False),
    Ready("a Ready condition", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}, True),
    Ready("a Ready condition that is False", {"status": {"conditions": [{"type": "Ready", "status": "False"}]}},
          False),
    Ready("another condition", {"status": {"conditions": [{"type": "Synced", "status": "True"}]}}, False),
]


@pytest.mark.parametrize("case", READY, ids=lambda c: c.name)
def test_replica_ready(case: Ready) -> None:
    assert replica_ready(case.obj) is case.want


ROUTED = [
    Ready("not observed", None, False),
    Ready("no status", {"spec": {}}, False),
    Ready("no routing yet", {"status": {}}, False),
    Ready("an empty backend name", {"status": {"routing": {"backendName": ""}}}, False),
    Ready("its Backend is published", {"status": {"routing": {"backendName": "b"}}}, True),
]


@pytest.mark.parametrize("case", ROUTED, ids=lambda c: c.name)
def test_endpoint_routed(case: Ready) -> None:
    assert endpoint_routed(case.obj) is case.want


@dataclass(frozen=True)
class State:
    name: str
    child: Child
    ready: bool
    routed: bool
    available: bool


STATES = [
    State("Ready and routable", child(), True, True, True),
    State("Ready, endpoint without its Backend yet", child(routed=False), True, True, False),
    State("Ready, no endpoint", child(endpoint=False), True, False, False),
    State("not Ready, routable endpoint", child(ready=False), False, True, False),
]


@pytest.mark.parametrize("case", STATES, ids=lambda c: c.name)
def test_ready_routed_available(case: State) -> None:
    got = (case.child.ready, case.child.routed, case.child.available)
    want = (case.ready, case.routed, case.available)
    assert got == want, f"-want {want}, +got {got}"


def test_a_child_knows_its_key_and_resources() -> None:
    c = child(4, "b")
    assert (c.key, c.replica_resource, c.endpoint_resource) == ((4, "b"), "replica-4-b", "endpoint-4-b")


def test_current_is_the_schedulers_view() -> None:
    obj = replica_obj(2, "b", order_="2025-06-01T00:00:00Z/ml/dep/00002", pools=("p1", "p2"),
                      placement_=[{"pool": "p1", "pods": [{"count": 2, "devices": {"nic": 1, "gpu": 4}, "gang": True}]},
                                  {"pool": "p2", "pods": [{"count": 1}]}])
    obj["spec"]["engines"] = [{"name": "prefill", "members": [{"pool": "p1"}]},
                              {"name": "decode", "members": [{"pool": "p2"}, {"role": "Worker"}]}]
    c = Child(2, "b", "n", obj, None, replaced="2026-01-01T00:00:00Z")
    got = c.current(extra=True)
    want = Current(index=2, cluster="b", pools=("p1", "p2", ""), order="2025-06-01T00:00:00Z/ml/dep/00002",
                   pods=(PoolPlacement("p1", (PodGroup(2, {"gpu": 4, "nic": 1}, True),)),
                         PoolPlacement("p2", (PodGroup(1, {}, False),))),
                   extra=True, replaced="2026-01-01T00:00:00Z")
    assert got == want, f"-want {want}, +got {got}"
    assert list(got.pods[0].pods[0].devices) == ["gpu", "nic"]  # sorted, whatever the observed order


def test_current_of_a_replica_without_spec() -> None:
    got = Child(0, "a", "n", {"kind": "ModelReplica"}, None).current()
    assert got == Current(index=0, cluster="a", pools=(), order="", pods=(), extra=False, replaced="")


def test_placement_reads_numbers_as_integers() -> None:
    got = placement([{"pool": "p", "pods": [{"count": 2.0, "devices": {"gpu": 1.0}}]}, {}])
    assert got == (PoolPlacement("p", (PodGroup(2, {"gpu": 1}, False),)), PoolPlacement("", ()))
    assert type(got[0].pods[0].count) is int and type(got[0].pods[0].devices["gpu"]) is int


# --- read: pairing the observed children -------------------------------------------------


@dataclass(frozen=True)
class Read:
    name: str
    observed: dict[str, dict]
    want: list[tuple[int, str, bool]]  # index, cluster, has an endpoint; in order
    orphans: tuple[str, ...] = ()
    notes: dict[tuple[int, str], tuple[str, str, str]] = field(default_factory=dict)  # revision, draining, replaced


def _pair(index: int = 0, cluster: str = "a", endpoint: bool = True, **kw: Any) -> dict[str, dict]:
    out = {replica_resource(index, cluster): replica_obj(index, cluster, **kw)}
    if endpoint:
        out[endpoint_resource(index, cluster)] = endpoint_obj(index, cluster)
    return out


def _without(obj: dict, *path: str) -> dict:
    *parents, last = path
    d = obj
    for p in parents:
        d = d[p]
    del d[last]
    return obj


READS = [
    Read("nothing observed", {}, []),
    Read("a replica with its endpoint", _pair(), [(0, "a", True)]),
    Read("a replica without its endpoint", _pair(endpoint=False), [(0, "a", False)]),
    Read("an endpoint without its replica is an orphan", {"endpoint-1-b": endpoint_obj(1, "b")}, [],
         orphans=("endpoint-1-b",)),
    Read("sorted by index then cluster",
         {**_pair(2, "a"), **_pair(0, "b"), **_pair(0, "a", endpoint=False)},
         [(0, "a", False), (0, "b", True), (2, "a", True)]),
    Read("orphans sorted", {"endpoint-9-z": endpoint_obj(9, "z"), "endpoint-1-a": endpoint_obj(1, "a")}, [],
         orphans=("endpoint-1-a", "endpoint-9-z")),
    Read("names that are not ours are ignored", {"cache": {"kind": "ModelReplica"}, **_pair()}, [(0, "a", True)]),
    Read("another kind under our name is ignored", {"replica-0-a": replica_obj(kind="ModelEndpoint")}, []),
    Read("a replica without a cluster is ignored",
         {"replica-0-a": _without(replica_obj(), "spec", "cluster", "name")}, []),
    Read("a replica without an index is ignored", {"replica-0-a": _without(replica_obj(), "spec", "index")}, []),
    Read("a replica whose index is not an integer is ignored",
         {"replica-0-a": {**replica_obj(), "spec": {**replica_obj()["spec"], "index": "0"}}}, []),
    Read("revision, draining and replaced are read from the replica",
         _pair(revision="r1", draining="Removed: scaled down to 0", replaced="2026-01-01T00:00:00Z"),
         [(0, "a", True)], notes={(0, "a"): ("r1", "Removed: scaled down to 0", "2026-01-01T00:00:00Z")}),
    Read("without labels or annotations: all empty", {"replica-0-a": {
        "kind": "ModelReplica", "metadata": {"name": "x"}, "spec": {"index": 0, "cluster": {"name": "a"}}}},
        [(0, "a", False)], notes={(0, "a"): ("", "", "")}),
]


@pytest.mark.parametrize("case", READS, ids=lambda c: c.name)
def test_read(case: Read) -> None:
    got = read(case.observed)
    pairs = [(c.index, c.cluster, c.endpoint is not None) for c in got.replicas]
    assert pairs == case.want, f"-want {case.want}, +got {pairs}"
    assert got.orphans == case.orphans, f"-want {case.orphans}, +got {got.orphans}"
    for c in got.replicas:
        assert c.obj is case.observed[c.replica_resource]
        assert c.endpoint is case.observed.get(c.endpoint_resource)
        if c.key in case.notes:
            assert (c.revision, c.draining, c.replaced) == case.notes[c.key]


def test_read_names_each_replica_after_its_object() -> None:
    got = read(_pair(3, "b"))
    assert got.replicas[0].name == f"{NAME}-3-b"
    assert got.replicas[0].obj["spec"]["order"] == order(3)


def test_live_lists_every_observed_replica_by_namespace_and_name() -> None:
    got = read({**_pair(0, "a"), **_pair(1, "b", endpoint=False)}).live(NS)
    assert got == frozenset({f"{NS}/{NAME}-0-a", f"{NS}/{NAME}-1-b"})
