"""clusters: InferenceClusters, read from their wire bytes, as the scheduler's
dataclasses and as this deployment sees them.

One version of a cluster is read once (its facts are memoised by its
bytes). A deployment's view leaves its observed replicas out of the pools'
allocations (the scheduler accounts for them itself) and marks its
replicas that are no longer observed as terminating, whose indexes are not
reused.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from modelplane.deployment import clusters
from modelplane.deployment.clusters import ClusterInfo, facts, read_clusters
from modelplane.errors import InputError
from modelplane.pipeline import received
from modelplane.pipeline.memo import DigestMemo
from modelplane.pipeline.received import Items, receive
from modelplane.scheduler import Allocation, Cluster, PodGroup, Pool, Taint

from tests.deployment.builders import CREATED, NAME, NS, allocation, at, inference_cluster, pool, wire

OWN = f"{NS}/{NAME}"
OTHER = "other/dep"


def _struct(obj: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(obj)
    return s


# --- one cluster's facts -------------------------------------------------------------


@dataclass(frozen=True)
class Facts:
    name: str
    obj: dict
    want: Cluster


FACTS = [
    Facts("Ready, no pools published", inference_cluster(), Cluster("a", {}, True, "", (), None)),
    Facts("Ready with an empty pool list", inference_cluster(pools=[]), Cluster("a", {}, True, "", (), ())),
    Facts("labels", inference_cluster(labels={"tier": "prod", "region": "eu"}, pools=[]),
          Cluster("a", {"region": "eu", "tier": "prod"}, True, "", (), ())),
    Facts("NotReady: its reason", inference_cluster(ready=False, reason="Provisioning"),
          Cluster("a", {}, False, "Provisioning", (), None)),
    Facts("no Ready condition yet", inference_cluster(ready=None), Cluster("a", {}, False, "no Ready condition yet",
                                                                           (), None)),
    Facts("taints; the effect defaults to NoSchedule",
          inference_cluster(taints=[{"key": "spot"}, {"key": "maint", "value": "yes", "effect": "NoExecute"}]),
          Cluster("a", {}, True, "", (Taint("spot", "", "NoSchedule"), Taint("maint", "yes", "NoExecute")), None)),
    Facts("pools and their allocations",
          inference_cluster(pools=[pool("p", "k", 4, [allocation(f"{OTHER}-0-a", OTHER, 0, gpus=2)]),
                                   pool("q", "l", 1)]),
          Cluster("a", {}, True, "", (), (
              Pool("p", "k", 4, (Allocation(f"{OTHER}-0-a", OTHER, f"{CREATED}/{OTHER}/00000",
                                            (PodGroup(1, {"gpu": 2}, False),)),)),
              Pool("q", "l", 1, ())))),
]


@pytest.mark.parametrize("case", FACTS, ids=lambda c: c.name)
def test_facts_cluster(case: Facts) -> None:
    got = facts(_struct(case.obj)).cluster
    assert got == case.want, f"-want {case.want}, +got {got}"


def test_pod_groups_are_read_as_integers_and_sorted() -> None:
    alloc = {"replica": "r", "deployment": OTHER, "order": "o",
             "pods": [{"count": 2, "devices": {"nic": 1, "gpu": 8}, "gang": True}, {"count": 1}]}
    got = facts(_struct(inference_cluster(pools=[pool(allocations=[alloc])]))).cluster.pools[0].allocations[0].pods
    assert got == (PodGroup(2, {"gpu": 8, "nic": 1}, True), PodGroup(1, {}, False))
    assert list(got[0].devices) == ["gpu", "nic"] and type(got[0].count) is int and type(got[0].devices["gpu"]) is int


@dataclass(frozen=True)
class Info:
    name: str
    obj: dict
    want: ClusterInfo
    since: str = ""


INFOS = [
    Info("the provider config defaults to the cluster's name", inference_cluster(), ClusterInfo("a", {})),
    Info("provider config and gateway as published",
         inference_cluster(provider_config="pc", gateway={"address": "203.0.113.10", "name": "gw"}),
         ClusterInfo("pc", {"address": "203.0.113.10", "name": "gw"})),
    Info("since: the Ready condition's last transition", inference_cluster(since=at(3), created=at(0)),
         ClusterInfo("a", {}), since=at(3)),
    Info("since, without one: the creation time", inference_cluster(created=at(0)), ClusterInfo("a", {}), since=at(0)),
    Info("since, without a Ready condition: the creation time", inference_cluster(ready=None, created=at(0)),
         ClusterInfo("a", {}), since=at(0)),
    Info("since, knowing neither: empty", inference_cluster(), ClusterInfo("a", {}), since=""),
]


@pytest.mark.parametrize("case", INFOS, ids=lambda c: c.name)
def test_facts_info_and_since(case: Info) -> None:
    got = facts(_struct(case.obj))
    assert (got.info, got.since) == (case.want, case.since), f"-want {(case.want, case.since)}, +got {got}"


def test_facts_lists_the_deployments_allocated() -> None:
    obj = inference_cluster(pools=[pool("p", allocations=[allocation("x/r", "x/d"), allocation("y/r", "y/d")]),
                                   pool("q", allocations=[allocation("x/s", "x/d")])])
    assert facts(_struct(obj)).deployments == ("x/d", "y/d")  # each once, sorted


# --- one deployment's view ------------------------------------------------------------


def _mine(index: int) -> dict:
    return allocation(f"{OWN}-{index}-a", OWN, index)


def _theirs(index: int) -> dict:
    return allocation(f"{OTHER}-{index}-a", OTHER, index)


@dataclass(frozen=True)
class View:
    name: str
    allocations: list[dict]
    live: frozenset[str]
    want: list[tuple[str, str]]  # (replica, deployment) as the scheduler replays them
    terminating: frozenset[int] = frozenset()


VIEWS = [
    View("another deployment's allocations count", [_theirs(0)], frozenset(), [(f"{OTHER}-0-a", OTHER)]),
    View("our observed replicas are left out", [_mine(0), _theirs(0)], frozenset({f"{OWN}-0-a"}),
         [(f"{OTHER}-0-a", OTHER)]),
    View("ours no longer observed are marked terminating", [_mine(0), _mine(3)], frozenset({f"{OWN}-0-a"}),
         [(f"{OWN}-3-a", f"{OWN} (terminating)")], terminating=frozenset({3})),
    View("nothing of ours observed: every one terminating", [_mine(1), _mine(2)], frozenset(),
         [(f"{OWN}-1-a", f"{OWN} (terminating)"), (f"{OWN}-2-a", f"{OWN} (terminating)")],
         terminating=frozenset({1, 2})),
    View("another deployment's replicas are never terminating", [_theirs(5)], frozenset({f"{OWN}-0-a"}),
         [(f"{OTHER}-5-a", OTHER)]),
]


@pytest.mark.parametrize("case", VIEWS, ids=lambda c: c.name)
def test_a_deployments_view(case: View) -> None:
    items = [wire(inference_cluster("a", pools=[pool(allocations=case.allocations)]))]
    [cluster], _, terminating = read_clusters(items, OWN, case.live)
    got = [(a.replica, a.deployment) for a in cluster.pools[0].allocations]
    assert got == case.want, f"-want {case.want}, +got {got}"
    for index in range(10):
        assert (index in terminating) == (index in case.terminating), index


def test_a_view_keeps_what_the_scheduler_replays() -> None:
    mine = _mine(3)
    items = [wire(inference_cluster("a", pools=[pool(allocations=[mine])]))]
    [cluster], _, _ = read_clusters(items, OWN)
    [a] = cluster.pools[0].allocations
    assert (a.order, a.pods) == (mine["order"], (PodGroup(1, {"gpu": 1}, False),))


def test_allocations_compare_and_index_like_a_tuple() -> None:
    items = [wire(inference_cluster("a", pools=[pool(allocations=[_theirs(0), _mine(1)])]))]
    [cluster], _, _ = read_clusters(items, OWN, frozenset({f"{OWN}-1-a"}))
    allocs = cluster.pools[0].allocations
    want = (Allocation(f"{OTHER}-0-a", OTHER, f"{CREATED}/{OTHER}/00000", (PodGroup(1, {"gpu": 1}, False),)),)
    assert allocs == want and len(allocs) == 1 and allocs[0] == want[0] and list(allocs) == list(want)


def test_terminating_reads_the_index_from_the_admission_key() -> None:
    odd = {**_mine(0), "order": "no-index-here"}
    items = [wire(inference_cluster("a", pools=[pool(allocations=[odd, _mine(12)])]))]
    _, _, terminating = read_clusters(items, OWN)
    assert 12 in terminating and 0 not in terminating


def test_clusters_are_sorted_by_name_and_nameless_ones_skipped() -> None:
    items = [wire(inference_cluster(n)) for n in ("c", "a", "b")] + [wire({"kind": "InferenceCluster"})]
    got, infos, _ = read_clusters(items, OWN)
    assert [c.name for c in got] == ["a", "b", "c"]
    assert list(infos) == ["a", "b", "c"] and len(infos) == 3


def test_cluster_infos() -> None:
    items = [wire(inference_cluster("a", provider_config="pc-a", since=at(1))), wire(inference_cluster("b"))]
    _, infos, _ = read_clusters(items, OWN)
    assert infos["a"] == ClusterInfo("pc-a", {}) and infos["b"] == ClusterInfo("b", {})
    assert infos.get("gone") is None
    assert (infos.since("a"), infos.since("b"), infos.since("gone")) == (at(1), "", "")


def test_bytes_that_do_not_decode_name_the_selector() -> None:
    with pytest.raises(InputError) as err:
        read_clusters([b"\x0a\xff"], OWN)
    assert err.value.field == "spec.clusterSelector"
    assert "could not be decoded" in err.value.message


def test_one_version_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clusters, "_CACHE", DigestMemo(10))  # a memo of this test's own
    reads: list[Any] = []
    real = clusters.facts
    monkeypatch.setattr(clusters, "facts", lambda s: reads.append(s) or real(s))
    v1 = wire(inference_cluster("memo-probe", labels={"v": "1"}))
    v2 = wire(inference_cluster("memo-probe", labels={"v": "2"}))
    for _ in range(3):
        read_clusters([v1], OWN)
    assert len(reads) == 1
    [got], _, _ = read_clusters([v2], OWN)
    assert len(reads) == 2 and got.labels == {"v": "2"}  # a new version is read anew


def test_the_memo_is_shared_but_each_view_is_the_deployments_own() -> None:
    # One version, read for two deployments: each sees its own replicas left out.
    item = wire(inference_cluster("shared-probe", pools=[pool(allocations=[_mine(0), _theirs(0)])]))
    [mine], _, _ = read_clusters([item], OWN, frozenset({f"{OWN}-0-a"}))
    [theirs], _, _ = read_clusters([item], OTHER, frozenset({f"{OTHER}-0-a"}))
    assert [a.deployment for a in mine.pools[0].allocations] == [OTHER]
    assert [a.deployment for a in theirs.pools[0].allocations] == [OWN]


# --- a whole fleet seen again ------------------------------------------------------------


def _items(*objs: dict, version: int) -> Items:
    """The clusters as the request decoder hands them over: ``Items`` with a version."""
    out = Items(wire(o) for o in objs)
    out.version = version
    return out


def test_a_fleet_seen_again_is_not_read_item_by_item(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same Items (same version): not one digest is taken; the views are still per deployment.
    memo: DigestMemo = DigestMemo(10)
    monkeypatch.setattr(clusters, "_CACHE", memo)
    fleet = _items(inference_cluster("b", pools=[pool(allocations=[_mine(0), _theirs(0)])]),
                   inference_cluster("a", ready=False, pools=[pool()]), version=7)
    first, _, _ = read_clusters(fleet, OWN, frozenset({f"{OWN}-0-a"}))
    taken = memo.hits + memo.misses
    mine, infos, terminating = read_clusters(fleet, OWN, frozenset({f"{OWN}-0-a"}))
    theirs, _, _ = read_clusters(fleet, OTHER, frozenset({f"{OTHER}-0-a"}))
    assert memo.hits + memo.misses == taken == 2
    assert mine == first and [c.name for c in mine] == ["a", "b"]   # sorted by name, as read item by item
    assert [a.deployment for a in mine[1].pools[0].allocations] == [OTHER]
    assert [a.deployment for a in theirs[1].pools[0].allocations] == [OWN]
    assert mine[0] is theirs[0]                                       # a cluster neither is on: one shared view
    assert infos.down == frozenset({"a"}) and infos.clusters["b"].ready and "c" not in infos.clusters
    assert 0 not in terminating


def test_a_fleets_terminating_replicas_are_found_from_the_clusters_it_is_on() -> None:
    fleet = _items(inference_cluster("a", pools=[pool(allocations=[_mine(3)])]), inference_cluster("b"), version=8)
    for _ in range(2):  # read, then from the kept fleet
        _, _, terminating = read_clusters(fleet, OWN, frozenset())
        assert 3 in terminating and 0 not in terminating


def test_a_changed_fleet_is_a_new_version() -> None:
    read_clusters(_items(inference_cluster("a", labels={"v": "1"}), version=9), OWN)
    [got], _, _ = read_clusters(_items(inference_cluster("a", labels={"v": "2"}), version=10), OWN)
    assert got.labels == {"v": "2"}
    # plain lists (a request that did not arrive as bytes) carry no version: always read item by item
    [plain], _, _ = read_clusters([wire(inference_cluster("a", labels={"v": "3"}))], OWN)
    assert plain.labels == {"v": "3"}


# --- a fleet that differs from the last one in a few clusters ------------------------------


DEPLOYMENTS = [OWN, OTHER, "ns-b/third"]
CLUSTERS = "clusters"


def _random_cluster(rnd: random.Random, name: str) -> dict:
    allocations = [allocation(f"{d}-{i}-a", d, i) for d in DEPLOYMENTS for i in range(3) if rnd.random() < 0.2]
    return inference_cluster(name, ready=rnd.random() < 0.8, labels={"zone": rnd.choice("ab")},
                             pools=[pool(allocations=allocations)])


def _fleet_request(objs: list[dict]) -> bytes:
    req = fnv1.RunFunctionRequest()
    for obj in objs:
        req.required_resources[CLUSTERS].items.append(fnv1.Resource.FromString(wire(obj)))
    return req.SerializeToString()


def _everything(items, live: frozenset[str]) -> list:
    """All a call reads of the fleet, for each deployment: the views, the infos, what terminates."""
    out = []
    for own in DEPLOYMENTS:
        got, infos, terminating = read_clusters(items, own, live)
        out.append((got, {n: infos[n] for n in infos}, infos.down, {n: infos.since(n) for n in infos},
                    dict(infos.clusters), frozenset(i for i in range(3) if i in terminating)))
    return out


def test_a_fleet_updated_by_item_is_the_fleet_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(received, "RECENT", received._Recent())
    monkeypatch.setattr(received, "KEPT_FROM_BYTES", 0)
    rnd = random.Random(35)
    updated = 0
    for case in range(60):
        names = [f"c{i:02d}" for i in range(rnd.randrange(1, 12))]
        objs = [_random_cluster(rnd, n) for n in names]
        live = frozenset(f"{OWN}-{i}-a" for i in range(3) if rnd.random() < 0.5)
        before = receive(_fleet_request(objs)).required[CLUSTERS]
        read_clusters(before, OWN, live)
        for _ in range(3):   # a few versions in a row, each updated from the one before
            for k in rnd.sample(range(len(objs)), rnd.randrange(0, len(objs) + 1)):
                pick = rnd.random()
                if pick < 0.1:      # renamed, or named as another: not the same cluster at that index
                    objs[k] = _random_cluster(rnd, rnd.choice([*names, "z-new"]))
                elif pick < 0.15:   # a nameless item is skipped
                    objs[k] = {"kind": "InferenceCluster"}
                else:               # the same cluster (or the item's name as before), written anew
                    objs[k] = _random_cluster(rnd, (objs[k].get("metadata") or {}).get("name") or names[k])
            data = _fleet_request(objs)
            after = receive(data).required[CLUSTERS]
            updated += after.earlier(clusters._Fleet) is not None
            whole = Items(after)     # the same bytes, read as a fleet of its own
            assert _everything(after, live) == _everything(whole, live), case
    assert updated > 100, "few versions were updated by item: the test proves little"
