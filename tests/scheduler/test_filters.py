"""Each filter alone: pass (None) or one short, countable reason."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.scheduler import Matches, Toleration
from modelplane.scheduler.filters import (
    CacheReady,
    ClusterReady,
    ClusterSelector,
    DeviceMatch,
    FilterContext,
    TaintToleration,
    run_filters,
)

from tests.scheduler.builders import (
    FakeMatcher,
    _cluster,
    _deployment,
    _engine,
    _fleet,
    _pool,
    _standalone,
)


@dataclass(frozen=True)
class Case:
    name: str
    filter: object
    cluster: object
    want: str | None
    deployment: object = None
    fleet: object = None


def _run(case: Case) -> str | None:
    d = case.deployment or _deployment()
    fleet = case.fleet or _fleet(case.cluster)
    ctx = FilterContext(d, fleet, Matches(d, fleet.classes, FakeMatcher()))
    return case.filter.filter(ctx, case.cluster)


_TWO_MEMBERS = _deployment(
    engines=[_engine("prefill", members=[_standalone(1, "mem >= 100")]), _engine("decode", members=[_standalone(1, "arch == Ampere")])]
)

CASES = [
    Case("ready cluster passes", ClusterReady(), _cluster(), None),
    Case("not ready names its reason", ClusterReady(), _cluster(ready=False, reason="GatewayPending"), "not ready (GatewayPending)"),
    Case("not ready without a reason", ClusterReady(), _cluster(ready=False), "not ready"),
    Case("selector labels all present", ClusterSelector(), _cluster(labels={"tier": "prod", "x": "y"}), None,
         _deployment(selector={"tier": "prod"})),
    Case("selector label missing", ClusterSelector(), _cluster(), "clusterSelector: label tier missing, want prod",
         _deployment(selector={"tier": "prod"})),
    Case("selector label wrong, counts the rest", ClusterSelector(), _cluster(labels={"tier": "dev"}),
         "clusterSelector: label region missing, want eu (+1 more)", _deployment(selector={"tier": "prod", "region": "eu"})),
    Case("NoSchedule taint keeps new replicas away", TaintToleration(), _cluster(taints=[("maintenance", "true", "NoSchedule")]),
         "NoSchedule taint maintenance=true"),
    Case("NoExecute taint keeps new replicas away", TaintToleration(), _cluster(taints=[("evict", "", "NoExecute")]),
         "NoExecute taint evict"),
    Case("PreferNoSchedule only scores", TaintToleration(), _cluster(taints=[("spot", "true", "PreferNoSchedule")]), None),
    Case("Equal toleration tolerates its taint", TaintToleration(), _cluster(taints=[("maintenance", "true", "NoSchedule")]), None,
         _deployment(tolerations=[Toleration("maintenance", "Equal", "true", "NoSchedule")])),
    Case("Equal toleration with another value does not", TaintToleration(),
         _cluster(taints=[("maintenance", "true", "NoSchedule")]), "NoSchedule taint maintenance=true",
         _deployment(tolerations=[Toleration("maintenance", "Equal", "false")])),
    Case("Exists with empty key tolerates everything", TaintToleration(),
         _cluster(taints=[("a", "1", "NoSchedule"), ("b", "", "NoExecute")]), None, _deployment(tolerations=[Toleration(operator="Exists")])),
    Case("toleration for another effect does not tolerate", TaintToleration(),
         _cluster(taints=[("a", "1", "NoSchedule"), ("b", "2", "NoSchedule")]), "NoSchedule taint a=1 (+1 more)",
         _deployment(tolerations=[Toleration("a", "Exists", effect="NoExecute")])),
    Case("no cache, no check", CacheReady(), _cluster(), None),
    Case("cache status not fetched yet", CacheReady(), _cluster(), "cache qwen status not observed yet",
         _deployment(cache="qwen")),
    Case("cache not on the cluster", CacheReady(), _cluster("a"), "cache qwen not on this cluster",
         _deployment(cache="qwen"), _fleet(_cluster("a"), cache_ready={"b": True})),
    Case("cache not ready", CacheReady(), _cluster("a"), "cache qwen not Ready",
         _deployment(cache="qwen"), _fleet(_cluster("a"), cache_ready={"a": False})),
    Case("cache ready", CacheReady(), _cluster("a"), None, _deployment(cache="qwen"), _fleet(_cluster("a"), cache_ready={"a": True})),
    Case("a matching pool passes", DeviceMatch(), _cluster(pools=[_pool("l4"), _pool("a100")]), None,
         _deployment(engines=[_engine(members=[_standalone(1, "mem >= 40")])])),
    Case("pools not reported yet", DeviceMatch(), _cluster(pools="unknown"), "no pools reported yet"),
    Case("selector false names the pool and selector", DeviceMatch(), _cluster(pools=[_pool("l4")]),
         'no pool has a device matching request "gpu" (l4: device gpu: selector 2 false)',
         _deployment(engines=[_engine(members=[_standalone(1, "mem >= 20", "mem >= 40")])])),
    Case("count beyond the node", DeviceMatch(), _cluster(pools=[_pool("l4"), _pool("l40s")]),
         'no pool has a device matching request "gpu" (l4: device gpu: count 8 > 1 per node; l40s: device gpu: count 8 > 4 per node)',
         _deployment(engines=[_engine(members=[_standalone(8)])])),
    Case("selector error is shown", DeviceMatch(), _cluster(pools=[_pool("a100")]),
         'no pool has a device matching request "gpu" (a100: device gpu: selector 1 error: no such key: boom)',
         _deployment(engines=[_engine(members=[_standalone(1, "boom")])])),
    Case("unknown class", DeviceMatch(), _cluster(pools=[_pool("x", "gone")]),
         "no pool has a known class (x: class gone not found)"),
    Case("several members name the one that fails", DeviceMatch(), _cluster(pools=[_pool("a100")]),
         'prefill/Standalone: no pool has a device matching request "gpu" (a100: device gpu: selector 1 false)', _TWO_MEMBERS),
    Case("members may use different pools", DeviceMatch(), _cluster(pools=[_pool("a100"), _pool("h200")]), None, _TWO_MEMBERS),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_filter(case: Case) -> None:
    assert _run(case) == case.want


def test_first_rejecting_filter_names_the_cluster_reason() -> None:
    d = _deployment(selector={"tier": "prod"})
    c = _cluster(ready=False, taints=[("m", "", "NoSchedule")])
    fleet = _fleet(c)
    ctx = FilterContext(d, fleet, Matches(d, fleet.classes, FakeMatcher()))
    assert run_filters(ctx, c) == ("ClusterReady", "not ready")
