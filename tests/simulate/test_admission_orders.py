"""admission_orders.check: an outcome of same-second competitors is accepted when some admission
order through the real scheduler reaches it, and rejected otherwise."""
from __future__ import annotations

import itertools

import pytest
import yaml
from modelplane import paths
from modelplane.simulate import admission_orders as ao

from tests.scheduler.builders import FakeMatcher, _cluster, _deployment, _engine, _fleet, _pool, _standalone

# Two clusters with one 8-GPU node each; three deployments of one 8-GPU replica each: one loses.
FLEET = _fleet(_cluster("a", [_pool("a100", nodes=1)]), _cluster("b", [_pool("a100", nodes=1)]))
X, Y, Z = (_deployment(name=n, engines=[_engine(members=[_standalone(8)])]) for n in "xyz")
FULL = ("0/2 clusters fit: a: pool a100 has room for 0 of 1 pods (8 gpu each); "
        "b: pool a100 has room for 0 of 1 pods (8 gpu each)")


def placed(cluster: str, pool: str = "a100") -> dict:
    return {0: (cluster, (pool,))}


def check(*observed: ao.Observed, competitors=(X, Y, Z)):
    return ao.check(FLEET, list(competitors), list(observed), matcher=FakeMatcher())


def outcome_of(order) -> list[ao.Observed]:
    """What the control plane would report had it admitted ``order``, as a deployment reports it."""
    ends = ao.admit(FLEET, order, FakeMatcher())
    return [ao.Observed(k, {p.index: (p.cluster, tuple(m.pool for m in p.members)) for p in s.placements},
                        {u.index: f"{s.message}" for u in s.unplaced}) for k, s in ends.items()]


def test_a_hand_written_outcome_is_reachable_and_names_its_order():
    v = check(ao.Observed("ml/y", placed("a")), ao.Observed("ml/x", placed("b")),
              ao.Observed("ml/z", unplaced={0: f"0/1 replicas placed; replica 0: {FULL}"}))
    assert v.accepted, str(v)
    assert v.order == ("ml/y", "ml/x", "ml/z")


@pytest.mark.parametrize("order", list(itertools.permutations((X, Y, Z))),
                         ids=lambda o: "-".join(d.name for d in o))
def test_the_outcome_of_every_order_is_accepted(order):
    v = check(*outcome_of(order))
    assert v.accepted, str(v)
    # The first order found yields the same outcome (several orders may).
    assert sorted(map(repr, outcome_of([{d.key: d for d in (X, Y, Z)}[k] for k in v.order]))) == \
        sorted(map(repr, outcome_of(order)))


def test_the_six_orders_reach_six_outcomes():
    assert len({tuple(sorted(map(repr, outcome_of(o)))) for o in itertools.permutations((X, Y, Z))}) == 6


def test_an_overcommitted_pool_is_rejected():
    v = check(ao.Observed("ml/x", placed("a")), ao.Observed("ml/y", placed("a")), ao.Observed("ml/z", placed("b")))
    assert not v.accepted
    assert len(v.problems) == 6 and all(p.startswith("order ") for p in v.problems), v.problems
    assert "not reachable in any admission order" in str(v)


def test_everyone_placed_is_rejected_when_only_two_fit():
    v = check(ao.Observed("ml/x", placed("a")), ao.Observed("ml/y", placed("b")), ao.Observed("ml/z", placed("b")))
    assert not v.accepted


def test_a_loser_without_a_reason_is_rejected():
    v = check(ao.Observed("ml/x", placed("a")), ao.Observed("ml/y", placed("b")), ao.Observed("ml/z", unplaced={0: " "}))
    assert not v.accepted
    assert v.problems == ("ml/z: replica 0 is unplaced without a reason",)


def test_a_loser_with_the_wrong_reason_is_rejected():
    v = check(ao.Observed("ml/x", placed("a")), ao.Observed("ml/y", placed("b")),
              ao.Observed("ml/z", unplaced={0: "0/2 clusters fit: a: clusterSelector does not match"}))
    assert not v.accepted
    assert any("ml/z replica 0: reported" in p for p in v.problems), v.problems


def test_a_loser_while_room_is_left_is_rejected():
    v = check(ao.Observed("ml/x", placed("a")), ao.Observed("ml/y", unplaced={0: FULL}),
              ao.Observed("ml/z", unplaced={0: FULL}))
    assert not v.accepted


def test_a_replica_neither_placed_nor_unplaced_is_rejected():
    v = check(ao.Observed("ml/x", placed("a")), ao.Observed("ml/y", placed("b")), ao.Observed("ml/z"))
    assert v.problems == ("ml/z: replicas [0] are neither placed nor unplaced",)


def test_one_outcome_per_competitor_is_required():
    with pytest.raises(ValueError, match="give one each"):
        check(ao.Observed("ml/x", placed("a")), ao.Observed("ml/y", placed("b")))


def test_more_competitors_than_the_cap_are_refused_saying_so():
    many = [_deployment(name=f"d{i}") for i in range(7)]
    with pytest.raises(ValueError, match="5040 admission orders; at most 720"):
        ao.check(FLEET, many, [ao.Observed(d.key) for d in many], matcher=FakeMatcher())


# --- from manifests, with the real CEL matcher -----------------------------------------------------

def _classes() -> list[dict]:
    return [d for d in yaml.safe_load_all((paths.EXAMPLES / "platform" / "inference-classes.yaml").read_text())
            if d and d.get("kind") == "InferenceClass"]


def _md(name: str) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment",
            "metadata": {"name": name, "namespace": "ml-team", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": 1, "clusterSelector": {"matchLabels": {"provider": "onprem"}}, "engines": [{"name": "engine", "members": [{
                "role": "Standalone",
                "nodeSelector": {"devices": [{"name": "gpu", "count": 8, "selectors": [
                    {"cel": 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"'}]}]},
                "template": {"spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.23.0"}]}}}]}]}}


def _served_cluster(allocations: list[dict], name: str = "onprem-west", provider: str = "onprem") -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster",
            "metadata": {"name": name, "labels": {"provider": provider}},
            "spec": {"cluster": {"source": "Existing"}, "nodePools": [{"name": "h100", "class": "h100-8x-ib", "nodeCount": 1}]},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}],
                       "pools": [{"name": "h100", "class": "h100-8x-ib", "nodes": 1, "allocations": allocations}]}}


def test_served_manifests_read_as_the_function_reads_them_without_the_competitors_allocations():
    theirs = {"replica": "ml-team/compete-a-0-onprem-west", "deployment": "ml-team/compete-a",
              "order": "2026-01-01T00:00:00Z/ml-team/compete-a/00000", "pods": [{"count": 1, "devices": {"gpu": 8}}]}
    # Another cluster with room the competitors' clusterSelector leaves out: they are never given it.
    elsewhere = _served_cluster([], name="gke-us-central", provider="gcp")
    fleet = ao.fleet_before([_served_cluster([theirs]), elsewhere], _classes(), ["ml-team/compete-a", "ml-team/compete-b"])
    cluster = fleet.clusters[1]
    assert cluster.name == "onprem-west" and cluster.pools[0].allocations == () and cluster.ready
    a, b = ao.competitor(_md("compete-a")), ao.competitor(_md("compete-b"))
    assert a.order(0) == "2026-01-01T00:00:00Z/ml-team/compete-a/00000"
    lost = "0/1 replicas placed; replica 0: 0/1 clusters fit: onprem-west: pool h100 has room for 0 of 1 pods (8 gpu each)"
    won = ao.Observed("ml-team/compete-a", {0: ("onprem-west", ("h100",))})
    v = ao.check(fleet, [a, b], [won, ao.Observed("ml-team/compete-b", unplaced={0: lost})])
    assert v.accepted and v.order == ("ml-team/compete-a", "ml-team/compete-b"), str(v)
    both = ao.Observed("ml-team/compete-b", {0: ("onprem-west", ("h100",))})
    assert not ao.check(fleet, [a, b], [won, both]).accepted
