"""compose: the ModelReplica and ModelEndpoint builders, and which observed
children are desired, kept untouched, or dropped.

Per placement: the replica is (re)built; a new endpoint waits for a Ready
replica that has published its URL, an existing one is kept meanwhile.
Held placements and extras that stay are kept untouched; an extra failover
replaced is annotated with its outage start. A replica that goes is
annotated (draining) and its endpoint dropped, or dropped itself once its
endpoint is gone. Anything else under our names is dropped.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest
from modelplane.deployment import observed as obs
from modelplane.deployment.compose import (
    Decided,
    Seen,
    Template,
    children,
    engines_spec,
    model_endpoint,
    model_replica,
    replica_labels,
)
from modelplane.deployment.drain import DELETING, DRAINING, EVICTED, REMOVED, Removal
from modelplane.deployment.inputs import CacheView, ClusterInfo
from modelplane.deployment.observed import Child
from modelplane.scheduler import (
    HELD,
    KEPT,
    LEADER,
    WORKER,
    DeviceRequest,
    Engine,
    Member,
    Placement,
    Schedule,
)

from tests.deployment.builders import (
    NAME,
    NS,
    OLD,
    REV,
    SELECTOR,
    at,
    child,
    endpoint_obj,
    engine,
    member,
    member_placement,
    observed_of,
    placement,
    sched_deployment,
    schedule,
    spec,
)

INFOS = {c: ClusterInfo(provider_config=f"pc-{c}") for c in ("a", "b", "c")}
DEP = sched_deployment()
RAW = spec()
URL = "http://203.0.113.10"


# --- which children ---------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    sched: Schedule
    children: tuple[Child, ...] = ()
    others: Mapping[str, dict] = field(default_factory=dict)  # more observed resources, not children
    leaving: tuple[Removal, ...] = ()
    replaced: dict[tuple[int, str], str] = field(default_factory=dict)
    # What Children must say; each is empty unless the row names it.
    desired: dict[str, bool | None] = field(default_factory=dict)  # name -> ready
    kept: frozenset[str] = frozenset()
    drop: tuple[str, ...] = ()
    withheld: tuple[int, ...] = ()


def _leaving(c: Child, phase: str = DRAINING, cause: str = REMOVED, reason: str = "scaled down to 0",
             unrouted: str = "") -> Removal:
    return Removal(c, cause, reason, phase, unrouted)


CASES = [
    Case("a new replica is desired; its endpoint waits", schedule(placements=[placement()]),
         desired={"replica-0-a": False}, withheld=(0,)),
    Case("Ready with its URL: the endpoint joins", schedule(placements=[placement(state=KEPT)]),
         (child(endpoint=False, url=URL),), desired={"replica-0-a": True, "endpoint-0-a": None}),
    Case("Ready without a URL: the endpoint waits", schedule(placements=[placement(state=KEPT)]),
         (child(endpoint=False, url=""),), desired={"replica-0-a": True}, withheld=(0,)),
    Case("a URL but not Ready: the endpoint waits", schedule(placements=[placement(state=KEPT)]),
         (child(endpoint=False, ready=False, url=URL),), desired={"replica-0-a": False}, withheld=(0,)),
    Case("an existing endpoint is rebuilt from the URL, Ready or not", schedule(placements=[placement(state=KEPT)]),
         (child(ready=False, url=URL),), desired={"replica-0-a": False, "endpoint-0-a": None}),
    Case("an existing endpoint is kept while there is no URL", schedule(placements=[placement(state=KEPT)]),
         (child(ready=False, url=""),), desired={"replica-0-a": False}, kept={"endpoint-0-a"}),
    Case("held: replica and endpoint kept untouched", schedule(placements=[placement(state=HELD)]), (child(),),
         kept={"replica-0-a", "endpoint-0-a"}),
    Case("held and never observed: nothing", schedule(placements=[placement(state=HELD)])),
    Case("a cluster not observed is held", schedule(placements=[placement(0, "gone", state=KEPT)]),
         (child(0, "gone"),), kept={"replica-0-gone", "endpoint-0-gone"}),
    Case("an extra that stays is kept untouched", schedule(placements=[placement(0, "a")], extras=[placement(1, "b")]),
         (child(0, "a", endpoint=False, url=""), child(1, "b", revision=OLD)),
         desired={"replica-0-a": True}, withheld=(0,), kept={"replica-1-b", "endpoint-1-b"}),
    Case("an extra failover replaced is annotated; its endpoint kept", schedule(extras=[placement(1, "b")]),
         (child(1, "b"),), replaced={(1, "b"): at(0)}, desired={"replica-1-b": True}, kept={"endpoint-1-b"}),
    Case("an extra already annotated with that outage is kept untouched", schedule(extras=[placement(1, "b")]),
         (child(1, "b", replaced=at(0)),), replaced={(1, "b"): at(0)}, kept={"replica-1-b", "endpoint-1-b"}),
    Case("an extra annotated with an older outage is annotated again", schedule(extras=[placement(1, "b")]),
         (child(1, "b", replaced=at(-60)),), replaced={(1, "b"): at(0)}, desired={"replica-1-b": True},
         kept={"endpoint-1-b"}),
    Case("draining, routes may carry it: the replica is annotated, its endpoint kept out of routing", schedule(),
         (child(),), leaving=(_leaving(child()),), desired={"replica-0-a": True, "endpoint-0-a": None}),
    Case("draining, routes clear: the replica is annotated, its endpoint dropped", schedule(), (child(),),
         leaving=(_leaving(child(), unrouted="2026-01-01T00:00:00Z"),), desired={"replica-0-a": True},
         drop=("endpoint-0-a",)),
    Case("deleting: the replica is dropped", schedule(), (child(endpoint=False),),
         leaving=(_leaving(child(endpoint=False), DELETING),), drop=("replica-0-a",)),
    Case("an extra the rollout retires is not kept", schedule(extras=[placement(1, "b")]), (child(1, "b", revision=OLD),),
         leaving=(_leaving(child(1, "b", revision=OLD)),), desired={"replica-1-b": True, "endpoint-1-b": None}),
    Case("a held extra that is deleted is not kept", schedule(extras=[placement(1, "b", state=HELD)]),
         (child(1, "b", endpoint=False),), leaving=(_leaving(child(1, "b", endpoint=False), DELETING),),
         drop=("replica-1-b",)),
    Case("an endpoint without its replica is dropped", schedule(), others={"endpoint-3-z": endpoint_obj(3, "z")},
         drop=("endpoint-3-z",)),
    Case("observed resources not under our names are left alone", schedule(), others={"cache": {"kind": "X"}}),
    Case("a child in no schedule and no removal is dropped", schedule(), (child(),),
         drop=("endpoint-0-a", "replica-0-a")),
]


def _run(case: Case):
    observed = {**observed_of(*case.children), **case.others}
    return children(Template(DEP, RAW, revision=REV), Seen(observed, obs.read(observed), INFOS),
                    Decided(case.sched, case.leaving, case.replaced))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_children(case: Case) -> None:
    out = _run(case)
    got = ({n: r for n, (_, r) in out.desired.items()}, out.kept, tuple(out.drop), tuple(out.withheld))
    want = (case.desired, set(case.kept), case.drop, case.withheld)
    assert got == want, f"-want {want}, +got {got}"


def test_a_draining_replica_is_otherwise_untouched() -> None:
    c = child(revision=OLD, replaced=at(0))
    before = copy.deepcopy(c.obj)
    out = _run(Case("", schedule(), (c,), leaving=(_leaving(c, cause=EVICTED, reason="pool p no longer exists"),)))
    got, _ = out.desired["replica-0-a"]
    want = copy.deepcopy(before)
    del want["status"]
    want["metadata"] = {"name": c.name, "namespace": NS, "labels": before["metadata"]["labels"],
                        "annotations": {"modelplane.ai/replaced": at(0),
                                        "modelplane.ai/draining": "Evicted: pool p no longer exists"}}
    assert got == want, f"-want {want}, +got {got}"  # no status, no uid/resourceVersion, spec as observed
    assert c.obj == before  # the observed object is not written into


def test_a_replaced_extra_is_otherwise_untouched() -> None:
    c = child(1, "b", revision=OLD)
    out = _run(Case("", schedule(extras=[placement(1, "b")]), (c,), replaced={(1, "b"): at(0)}))
    got, ready = out.desired["replica-1-b"]
    assert got["metadata"]["annotations"] == {"modelplane.ai/replaced": at(0)}
    assert got["spec"] == c.obj["spec"] and "status" not in got and ready is True


def test_the_endpoint_follows_the_replica() -> None:
    c = child(endpoint=False, url=URL)
    out = _run(Case("", schedule(placements=[placement(state=KEPT)]), (c,)))
    replica, _ = out.desired["replica-0-a"]
    endpoint, _ = out.desired["endpoint-0-a"]
    assert endpoint["metadata"] == {"name": replica["metadata"]["name"], "namespace": NS,
                                    "labels": replica["metadata"]["labels"]}
    assert endpoint["spec"]["url"] == URL and endpoint["spec"]["rewritePath"] == "/"
    assert endpoint["spec"]["replica"]["name"] == replica["metadata"]["name"]
    assert endpoint["spec"]["replica"]["cluster"] == "a"
    assert endpoint["spec"]["replica"]["providerConfigName"] == replica["spec"]["cluster"]["providerConfigName"]


def test_a_replica_is_rebuilt_from_the_deployment_not_the_observed_object() -> None:
    c = child(0, "a", revision=OLD)
    c.obj["spec"]["engines"][0]["members"][0]["template"] = {"spec": {"containers": [{"image": "stale"}]}}
    out = _run(Case("", schedule(placements=[placement(state=KEPT)]), (c,)))
    replica, _ = out.desired["replica-0-a"]
    assert replica["metadata"]["labels"]["modelplane.ai/revision"] == REV
    assert replica["spec"]["engines"][0]["members"][0]["template"] == RAW["engines"][0]["members"][0]["template"]
    assert "annotations" not in replica["metadata"] and "status" not in replica


# --- the builders -------------------------------------------------------------------


@dataclass(frozen=True)
class Labels:
    name: str
    user: dict[str, str] | None
    want: dict[str, str]
    revision: str = ""


RESERVED = {"modelplane.ai/cluster": "a", "modelplane.ai/deployment": NAME, "modelplane.ai/replica": "0"}

LABELS = [
    Labels("no user labels", None, RESERVED),
    Labels("user labels propagate", {"team": "search"}, {**RESERVED, "team": "search"}),
    Labels("a user cannot set a reserved key", {"modelplane.ai/cluster": "z", "modelplane.ai/other": "x"}, RESERVED),
    Labels("the revision, when given", {}, {**RESERVED, "modelplane.ai/revision": REV}, revision=REV),
    Labels("a user cannot forge a revision", {"modelplane.ai/revision": "forged"}, RESERVED),
]


@pytest.mark.parametrize("case", LABELS, ids=lambda c: c.name)
def test_replica_labels(case: Labels) -> None:
    got = replica_labels(case.user, NAME, "a", 0, case.revision)
    assert got == case.want, f"-want {case.want}, +got {got}"
    assert list(got) == sorted(got)


def test_model_replica() -> None:
    info = ClusterInfo("pc-a", {"namespace": "gw", "address": "203.0.113.10"})
    got = model_replica(Template(DEP, RAW, {"team": "search"}, revision=REV), placement(2, "a", state=KEPT), info)
    want = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": f"{NAME}-2-a", "namespace": NS,
                     "labels": {"modelplane.ai/cluster": "a", "modelplane.ai/deployment": NAME,
                                "modelplane.ai/replica": "2", "modelplane.ai/revision": REV, "team": "search"}},
        "spec": {
            "deployment": NAME,
            "index": 2,
            "order": f"2026-01-01T00:00:00Z/{NS}/{NAME}/00002",
            "cluster": {"name": "a", "providerConfigName": "pc-a",
                        "gateway": {"address": "203.0.113.10", "namespace": "gw"}},
            "servingMode": "Unified",
            "engines": [{"name": "e", "copies": 1, "members": [{
                "role": "Standalone", "nodes": 1, "pool": "p",
                "devices": [{"name": "gpu", "count": 1, "claim": "DRA", "deviceClassName": "gpu.nvidia.com",
                             "selectors": [{"cel": SELECTOR}]}],
                "template": RAW["engines"][0]["members"][0]["template"]}]}],
            "placement": [{"pool": "p", "pods": [{"count": 1, "devices": {"gpu": 1}, "gang": False}]}],
        },
    }
    assert got == want, f"-want {want}, +got {got}"
    assert list(got["spec"]["cluster"]["gateway"]) == ["address", "namespace"]


def test_model_replica_without_a_gateway_has_no_gateway_field() -> None:
    got = model_replica(Template(DEP, RAW), placement(), ClusterInfo("pc-a"))
    assert got["spec"]["cluster"] == {"name": "a", "providerConfigName": "pc-a"}
    assert "modelplane.ai/revision" not in got["metadata"]["labels"]
    assert "modelCache" not in got["spec"]


@dataclass(frozen=True)
class Cache:
    name: str
    cache: CacheView
    want: dict[str, str]


CACHES = [
    Cache("the PVC the cluster reports", CacheView("qwen", {"a": True}, {"a": "pvc-on-a"}),
          {"name": "qwen", "pvcName": "pvc-on-a"}),
    Cache("not reported on this cluster: the default name", CacheView("qwen", {}, {"b": "pvc-on-b"}),
          {"name": "qwen", "pvcName": "modelcache-qwen"}),
]


@pytest.mark.parametrize("case", CACHES, ids=lambda c: c.name)
def test_model_replica_cache(case: Cache) -> None:
    got = model_replica(Template(DEP, RAW, cache=case.cache), placement(0, "a"), ClusterInfo("pc-a"))["spec"][
        "modelCache"]
    assert got == case.want, f"-want {case.want}, +got {got}"


def test_engines_spec_resolves_each_member_in_order() -> None:
    dep = sched_deployment(serving_mode="PrefillDecode", engines=[
        Engine("prefill", copies=2, phase="Prefill", members=(Member(devices=(DeviceRequest("gpu", 2),)),)),
        Engine("decode", phase="Decode", members=(Member(LEADER, 1), Member(WORKER, 3))),
    ])
    raw = [engine("prefill", [member(image="p")]),
           engine("decode", [member(LEADER, image="l"), member(WORKER, image="w")])]
    p = Placement(0, "a", "o", members=(member_placement("prefill", pool="h100", gpus=2),
                                        member_placement("decode", LEADER, "h200", device_class=None),
                                        member_placement("decode", WORKER, "h200")))
    got = engines_spec(dep, raw, p)
    summary = [(e["name"], e["copies"], e.get("phase"),
                [(m["role"], m["nodes"], m["pool"], m["template"]["spec"]["containers"][0]["image"],
                  [d.get("deviceClassName") for d in m["devices"]]) for m in e["members"]]) for e in got]
    want = [("prefill", 2, "Prefill", [("Standalone", 1, "h100", "p", ["gpu.nvidia.com"])]),
            ("decode", 1, "Decode", [("Leader", 1, "h200", "l", [None]), ("Worker", 3, "h200", "w", ["gpu.nvidia.com"])])]
    assert summary == want, f"-want {want}, +got {summary}"


def test_engines_spec_has_no_phase_when_unified() -> None:
    dep = sched_deployment(engines=[Engine("e", phase="Prefill", members=(Member(),))])
    got = engines_spec(dep, [engine()], placement())
    assert "phase" not in got[0]


@pytest.mark.parametrize("published,refs", [
    ({"url": URL, "backendRefs": [{"group": "", "kind": "Service", "name": "n-e", "port": 8000}]},
     [{"group": "", "kind": "Service", "name": "n-e", "port": 8000}]),
    ({"url": URL}, None),
], ids=["backends published", "backends not yet published"])
def test_model_endpoint(published: dict, refs: list | None) -> None:
    labels = {"team": "search"}
    replica = {"metadata": {"name": "n", "namespace": NS, "labels": labels},
               "spec": {"cluster": {"name": "a", "providerConfigName": "pc-a",
                                    "gateway": {"address": "203.0.113.10", "name": "gw", "namespace": "gw-ns"}}}}
    got = model_endpoint(replica, published)
    want_replica = {"name": "n", "cluster": "a", "providerConfigName": "pc-a",
                    "gateway": {"name": "gw", "namespace": "gw-ns"}}
    if refs is not None:
        want_replica["backendRefs"] = refs
    assert got == {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelEndpoint",
                   "metadata": {"name": "n", "namespace": NS, "labels": {"team": "search"}},
                   "spec": {"url": URL, "rewritePath": "/", "api": "OpenAI", "replica": want_replica}}
    assert got["metadata"]["labels"] is not labels
