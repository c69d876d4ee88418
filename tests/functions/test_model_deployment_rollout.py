"""Template revisions, rolling updates and failover in compose-model-deployment.

Pure parts first (revision hashing, surge/unavailable arithmetic, durations,
one rollout step), then the rollout state machine over successive calls
with observed state built here, then failover with an injected clock (the
pipeline context's ``modelplane.ai/now``) and the response TTL.
"""
from __future__ import annotations

import copy
import datetime

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import functions
from modelplane.deployment import rollout
from modelplane.deployment.observed import Child
from modelplane.deployment.revision import revision
from modelplane.deployment.strategy import (
    RECREATE,
    Strategy,
    parse_duration,
    read_failover,
    read_strategy,
    scaled,
)
from modelplane.errors import InputError
from modelplane.pipeline.server import compose_call

from tests.clock import skewed
from tests.functions.deployments import (
    A100,
    L4,
    QWEN_DEMO,
    cluster,
    deployment,
    inputs,
    observe,
    pool_status,
)
from tests.support import conditions, desired, fatal, request, run, status

FN = "compose-model-deployment"
T0 = datetime.datetime(2026, 1, 1, 0, 0, tzinfo=datetime.UTC)


def at(minutes: float) -> str:
    return (T0 + datetime.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def call(xr: dict, required: dict | None, observed: dict | None = None, now: str | None = None):
    req = request(xr, observed=observed, required=required)
    if now is not None:
        req.context.update({"modelplane.ai/now": now})
    return run(FN, req)


# --- revision: what rolls and what does not -----------------------------------------

BASE = deployment(QWEN_DEMO)


def _with(change) -> dict:
    xr = copy.deepcopy(BASE)
    change(xr["spec"])
    return xr


def _container(spec: dict) -> dict:
    return spec["engines"][0]["members"][0]["template"]["spec"]["containers"][0]


ROLLS = {
    "a new image": lambda s: _container(s).update(image="vllm/vllm-openai:v0.99.0"),
    "new args": lambda s: _container(s).update(args=["--max-model-len", "4096"]),
    "an env var": lambda s: _container(s).update(env=[{"name": "X", "value": "1"}]),
    "a device selector": lambda s: s["engines"][0]["members"][0]["nodeSelector"]["devices"][0].update(
        selectors=[{"cel": "true"}]),
    "more copies per replica": lambda s: s["engines"][0].update(copies=2),
    "a model cache": lambda s: s.update(modelCacheRef={"name": "c"}),
    "the serving mode": lambda s: s.update(serving={"mode": "PrefillDecode"}),
}
STAYS = {
    "scale": lambda s: s.update(replicas=7),
    "clusterSelector": lambda s: s.update(clusterSelector={"matchLabels": {"tier": "prod"}}),
    "tolerations": lambda s: s.update(tolerations=[{"key": "spot", "operator": "Exists"}]),
    "strategy": lambda s: s.update(strategy={"type": "Recreate"}),
    "failover": lambda s: s.update(failover={"after": "1m"}),
    "serving mode spelled out as its default": lambda s: s.update(serving={"mode": "Unified"}),
}


@pytest.mark.parametrize("name", sorted(ROLLS))
def test_a_change_that_reaches_the_pods_is_a_new_revision(name):
    assert revision(_with(ROLLS[name])["spec"]) != revision(BASE["spec"])


@pytest.mark.parametrize("name", sorted(STAYS))
def test_a_change_that_does_not_reach_the_pods_keeps_the_revision(name):
    assert revision(_with(STAYS[name])["spec"]) == revision(BASE["spec"])


def test_revision_is_short_stable_and_independent_of_key_order():
    spec = BASE["spec"]
    shuffled = {k: spec[k] for k in reversed(list(spec))}
    assert revision(shuffled) == revision(spec)
    assert len(revision(spec)) == 10 and int(revision(spec), 16) >= 0


# --- surge and unavailability: integers, percentages, rounding --------------------------


@pytest.mark.parametrize("value,total,up,want", [
    (2, 10, True, 2), (0, 10, False, 0),
    ("25%", 10, True, 3), ("25%", 10, False, 2),     # 2.5: surge rounds up, unavailable rounds down
    ("10%", 3, True, 1), ("10%", 3, False, 0),
    ("100%", 4, True, 4), ("0%", 4, True, 0),
])
def test_scaled_values_round_like_deployments(value, total, up, want):
    assert scaled(value, total, up, "f") == want


@pytest.mark.parametrize("spec,want", [
    ({}, Strategy("RollingUpdate", 1, 0)),
    ({"strategy": {"rollingUpdate": {"maxSurge": "50%", "maxUnavailable": "50%"}}}, Strategy("RollingUpdate", 2, 1)),
    # Both round to 0: unavailability becomes 1 so the rollout can move.
    ({"strategy": {"rollingUpdate": {"maxSurge": "10%", "maxUnavailable": "10%"}}}, Strategy("RollingUpdate", 1, 0)),
    ({"strategy": {"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "10%"}}}, Strategy("RollingUpdate", 0, 1)),
    ({"strategy": {"type": "Recreate"}}, Strategy(RECREATE, 0, 3)),
])
def test_read_strategy_resolves_against_replicas(spec, want):
    assert read_strategy(spec, 3) == want


@pytest.mark.parametrize("value,field", [
    ("25", "spec.strategy.rollingUpdate.maxSurge"), (-1, "spec.strategy.rollingUpdate.maxSurge"),
    (True, "spec.strategy.rollingUpdate.maxSurge")])
def test_bad_surge_names_the_field(value, field):
    with pytest.raises(InputError) as err:
        read_strategy({"strategy": {"rollingUpdate": {"maxSurge": value}}}, 3)
    assert err.value.field == field and "percentage" in str(err.value)


@pytest.mark.parametrize("text,want", [("5m", 300), ("90s", 90), ("1h30m", 5400), ("0", 0), ("2h", 7200)])
def test_durations(text, want):
    assert parse_duration(text, "f").total_seconds() == want


def test_failover_defaults_to_five_minutes_and_zero_disables_it():
    assert read_failover({}) == datetime.timedelta(minutes=5)
    assert read_failover({"failover": {"after": "0"}}) is None
    with pytest.raises(InputError, match="spec.failover.after"):
        read_failover({"failover": {"after": "soon"}})


# --- one rollout step, from children built here ----------------------------------------


def child(index: int, cluster_: str, rev: str, available: bool = True) -> Child:
    obj = {"kind": "ModelReplica", "status": {"ready": available}, "spec": {"index": index}}
    endpoint = {"status": {"routing": {"backendName": "b"}}} if available else None
    return Child(index, cluster_, f"d-{index}-{cluster_}", obj, endpoint, rev)


ALWAYS = lambda c: True


@pytest.mark.parametrize("name,strategy,new,old,want_target,want_retired", [
    ("surge first: one new replica, nothing retired", Strategy(max_surge=1, max_unavailable=0),
     [], ["a", "b", "c"], 1, 0),
    ("the new replica is not available yet: wait", Strategy(max_surge=1, max_unavailable=0),
     [False], ["a", "b", "c"], 1, 0),
    ("the new replica serves: one old replica goes", Strategy(max_surge=1, max_unavailable=0),
     [True], ["a", "b", "c"], 1, 1),
    ("after one old left: the next new replica", Strategy(max_surge=1, max_unavailable=0),
     [True], ["b", "c"], 2, 0),
    ("maxUnavailable 1 and nothing new placed: one old goes to make room",
     Strategy(max_surge=1, max_unavailable=1), [], ["a", "b", "c"], 1, 1),
    ("maxUnavailable 1: never below 2 available", Strategy(max_surge=1, max_unavailable=1),
     [False], ["b", "c"], 2, 0),
    ("surge 2 unavailable 0: two new at once", Strategy(max_surge=2, max_unavailable=0),
     [], ["a", "b", "c"], 2, 0),
    ("unavailable old replicas go first", Strategy(max_surge=1, max_unavailable=0),
     [False], ["a!", "b", "c"], 1, 0),
])
def test_rollout_step(name, strategy, new, old, want_target, want_retired):
    kids_new = [child(10 + i, "n", "v2", a) for i, a in enumerate(new)]
    kids_old = [child(i, c.rstrip("!"), "v1", not c.endswith("!")) for i, c in enumerate(old)]
    got = rollout.step(strategy, 3, "v2", kids_new, kids_old, 0, ALWAYS)
    assert (got.target, len(got.retire)) == (want_target, want_retired)


def test_unavailable_old_replicas_are_retired_first_when_there_is_budget():
    kids_old = [child(0, "a", "v1", False), child(1, "b", "v1"), child(2, "c", "v1")]
    got = rollout.step(Strategy(max_surge=1, max_unavailable=1), 3, "v2", [], kids_old, 0, ALWAYS)
    assert list(got.retire) == [(0, "a")]


def test_old_replicas_on_a_cluster_that_is_not_ready_are_never_retired():
    kids_old = [child(0, "down", "v1"), child(1, "b", "v1"), child(2, "c", "v1")]
    got = rollout.step(Strategy(max_surge=1, max_unavailable=3), 3, "v2", [], kids_old, 0,
                       lambda c: c.cluster != "down")
    assert (0, "down") not in got.retire and len(got.retire) == 2


def test_recreate_retires_everything_and_places_nothing_until_the_old_are_gone():
    kids_old = [child(0, "a", "v1"), child(1, "b", "v1")]
    got = rollout.step(Strategy(RECREATE, 0, 2), 2, "v2", [], kids_old, 0, ALWAYS)
    assert got.target == 0 and sorted(got.retire) == [(0, "a"), (1, "b")]
    assert rollout.step(Strategy(RECREATE, 0, 2), 2, "v2", [], [], 2, ALWAYS).target == 0
    assert rollout.step(Strategy(RECREATE, 0, 2), 2, "v2", [], [], 0, ALWAYS).target == 2


# --- the state machine over successive calls ----------------------------------------------


def _live_clusters(base: list[dict], observed: dict) -> list[dict]:
    replicas = [o for o in observed.values() if o["kind"] == "ModelReplica"]
    return [pool_status(c, replicas) for c in base]


def _available(observed: dict) -> int:
    """Replicas that carry traffic: Ready with a routable endpoint."""
    return sum(1 for n, o in observed.items() if o["kind"] == "ModelEndpoint"
               and observed.get("replica" + n[len("endpoint"):], {}).get("status", {}).get("ready"))


def run_rollout(xr: dict, base: list[dict], observed: dict, rounds: int = 30):
    """Call until nothing changes; every child turns Ready and routed one
    call after it is desired. Returns (observed, last response, trace)."""
    trace = []
    rsp = None
    for _ in range(rounds):
        rsp = call(xr, inputs(*_live_clusters(base, observed)), observed)
        assert fatal(rsp) is None, fatal(rsp)
        nxt = observe(rsp, url=True, ready=True)
        trace.append((_available(observed), sum(1 for o in observed.values() if o["kind"] == "ModelReplica"),
                      conditions(rsp)["Progressing"].reason))
        if nxt == observed:
            return observed, rsp, trace
        observed = nxt
    raise AssertionError(f"no fixed point: {trace}")


def _revisions(observed: dict) -> list[str]:
    return sorted(o["metadata"]["labels"]["modelplane.ai/revision"] for o in observed.values()
                  if o["kind"] == "ModelReplica")


THREE = [cluster(n, ("a100", A100, 1)) for n in ("c1", "c2", "c3")]


def _steady(xr: dict, base: list[dict]) -> dict:
    observed, rsp, _ = run_rollout(xr, base, {})
    assert _available(observed) == xr["spec"]["replicas"]
    assert conditions(rsp)["Progressing"].reason == "NewRevisionAvailable"
    return observed


def _new_image(xr: dict, **strategy) -> dict:
    out = copy.deepcopy(xr)
    _container(out["spec"]).update(image="vllm/vllm-openai:v0.99.0")
    if strategy:
        out["spec"]["strategy"] = {"rollingUpdate": strategy}
    return out


def test_a_rolling_update_keeps_every_replica_serving_and_ends_on_the_new_revision():
    v1 = deployment(QWEN_DEMO, replicas=3)
    # 1-GPU members on 8-GPU nodes: room for a surge replica everywhere.
    observed = _steady(v1, THREE)
    v2 = _new_image(v1)
    observed, rsp, trace = run_rollout(v2, THREE, observed)
    assert min(a for a, _, _ in trace) >= 3, trace
    assert max(n for _, n, _ in trace) <= 4, trace  # R + maxSurge, a draining replica included
    assert "RollingUpdate" in [r for _, _, r in trace]
    assert _revisions(observed) == [revision(v2["spec"])] * 3
    st = status(rsp)
    assert st["replicas"] == {"desired": 3, "scheduled": 3, "ready": 3, "updated": 3}
    assert conditions(rsp)["Progressing"].reason == "NewRevisionAvailable"


def test_the_first_step_adds_one_surge_replica_and_leaves_the_old_ones_untouched():
    v1 = deployment(QWEN_DEMO, replicas=3)
    observed = _steady(v1, THREE)
    v2 = _new_image(v1)
    rsp = call(v2, inputs(*_live_clusters(THREE, observed)), observed)
    got = desired(rsp)
    assert sorted(n for n in got if n.startswith("replica-")) == [
        "replica-0-c1", "replica-1-c2", "replica-2-c3", "replica-3-c1"]
    for name in ("replica-0-c1", "replica-1-c2", "replica-2-c3"):
        assert got[name]["spec"] == observed[name]["spec"]  # the old template, untouched
        assert got[name]["metadata"]["labels"]["modelplane.ai/revision"] == revision(v1["spec"])
    assert got["replica-3-c1"]["metadata"]["labels"]["modelplane.ai/revision"] == revision(v2["spec"])
    assert _container(got["replica-3-c1"]["spec"])["image"] == "vllm/vllm-openai:v0.99.0"
    st = status(rsp)
    assert st["replicas"]["updated"] == 1 and st["replicas"]["scheduled"] == 4
    assert st["revision"] == revision(v2["spec"])
    cond = conditions(rsp)["Progressing"]
    assert cond.reason == "RollingUpdate" and "1/3 replicas updated" in cond.message
    assert "3 of older revisions left" in cond.message


def test_with_no_room_and_max_unavailable_1_it_never_drops_below_two():
    full = [cluster(n, ("l4", L4, 1)) for n in ("c1", "c2", "c3")]  # one 1-GPU node each: no room to surge
    v1 = deployment(QWEN_DEMO, replicas=3)
    observed = _steady(v1, full)
    v2 = _new_image(v1, maxSurge=1, maxUnavailable=1)
    observed, rsp, trace = run_rollout(v2, full, observed)
    assert min(a for a, _, _ in trace) >= 2, trace
    assert _revisions(observed) == [revision(v2["spec"])] * 3
    assert conditions(rsp)["Progressing"].reason == "NewRevisionAvailable"


def test_with_no_room_and_max_unavailable_0_the_rollout_waits_and_says_why():
    full = [cluster(n, ("l4", L4, 1)) for n in ("c1", "c2", "c3")]
    v1 = deployment(QWEN_DEMO, replicas=3)
    observed = _steady(v1, full)
    v2 = _new_image(v1)
    after, rsp, _trace = run_rollout(v2, full, observed)
    assert after == observed  # every old replica still serving, nothing new
    cond = conditions(rsp)["Progressing"]
    assert cond.status == fnv1.STATUS_CONDITION_FALSE and cond.reason == "InsufficientCapacity"
    assert "maxUnavailable 0 keeps the older revision serving" in cond.message
    assert "room for 0 of 1 pods" in cond.message
    assert rsp.desired.composite.ready == fnv1.READY_TRUE  # still Ready: three replicas serve


def test_recreate_removes_the_old_revision_before_placing_the_new_one():
    v1 = deployment(QWEN_DEMO, replicas=2)
    base = THREE[:2]
    observed = _steady(v1, base)
    v2 = _new_image(v1)
    v2["spec"]["strategy"] = {"type": "Recreate"}
    observed_after, _rsp, trace = run_rollout(v2, base, observed)
    assert _revisions(observed_after) == [revision(v2["spec"])] * 2
    assert "Recreating" in [r for _, _, r in trace]
    # Replay the same calls: no call ever desired replicas of both revisions.
    seen = observed
    for _ in range(len(trace)):
        r = call(v2, inputs(*_live_clusters(base, seen)), seen)
        labels = {o["metadata"]["labels"]["modelplane.ai/revision"] for o in desired(r).values()
                  if o["kind"] == "ModelReplica"}
        assert len(labels) <= 1
        seen = observe(r, url=True, ready=True)


@pytest.mark.parametrize("change", ["labels", "scale"])
def test_labels_or_scale_do_not_roll(change):
    v1 = deployment(QWEN_DEMO, replicas=2)
    observed = _steady(v1, THREE)
    v2 = copy.deepcopy(v1)
    if change == "labels":
        v2["metadata"]["labels"] = {"team": "search"}
    else:
        v2["spec"]["replicas"] = 3
    rsp = call(v2, inputs(*_live_clusters(THREE, observed)), observed)
    assert status(rsp)["removals"] == []
    for name, obj in desired(rsp).items():
        if name in observed and obj["kind"] == "ModelReplica":
            assert obj["metadata"]["labels"]["modelplane.ai/revision"] == revision(v1["spec"])
            if change == "labels":
                assert obj["metadata"]["labels"]["team"] == "search"  # updated in place
    assert status(rsp)["replicas"]["updated"] == v2["spec"]["replicas"]


def test_observed_generation_is_reported():
    xr = deployment(QWEN_DEMO)
    xr["metadata"]["generation"] = 7
    assert status(call(xr, inputs(THREE[0])))["observedGeneration"] == 7


# --- failover: time from the context, TTL while a decision is pending -----------------------


def down(name: str, since: str, pools=(("a100", A100, 1),), **kw) -> dict:
    c = cluster(name, *pools, ready=False, **kw)
    c["status"]["conditions"][0]["lastTransitionTime"] = since
    return c


def _placed_on_c1(replicas: int = 1) -> tuple[dict, dict]:
    xr = deployment(QWEN_DEMO, replicas=replicas)
    observed = _steady(xr, [THREE[0]])
    return xr, observed


def test_a_cluster_down_less_than_failover_after_is_held_and_the_call_comes_back_in_time():
    xr, observed = _placed_on_c1()
    rsp = call(xr, inputs(down("c1", at(0)), THREE[1]), observed, now=at(4.5))
    assert sorted(desired(rsp)) == sorted(observed)  # held: nothing moves yet
    assert rsp.meta.ttl.seconds == 30  # 5m - 4m30s: called again when failover is due


def test_a_cluster_down_longer_than_failover_after_gets_its_replicas_replaced_elsewhere():
    xr, observed = _placed_on_c1()
    rsp = call(xr, inputs(down("c1", at(0)), THREE[1]), observed, now=at(6))
    got = desired(rsp)
    assert sorted(n for n in got if n.startswith("replica-")) == ["replica-0-c1", "replica-1-c2"]
    old = got["replica-0-c1"]
    assert old["metadata"]["annotations"] == {"modelplane.ai/replaced": at(0)}
    assert old["spec"] == observed["replica-0-c1"]["spec"]  # held, untouched
    assert "endpoint-0-c1" in got  # kept as it was
    st = status(rsp)
    assert [(p["index"], p["cluster"]) for p in st["placements"]] == [(0, "c1"), (1, "c2")]
    assert st["removals"] == []


def test_failover_disabled_never_replaces():
    xr, observed = _placed_on_c1()
    xr["spec"]["failover"] = {"after": "0"}
    rsp = call(xr, inputs(down("c1", at(0)), THREE[1]), observed, now=at(600))
    assert sorted(desired(rsp)) == sorted(observed)
    assert rsp.meta.ttl.seconds == 60  # nothing time-based pending: the default


def test_when_the_cluster_returns_the_replaced_replica_is_the_surplus():
    xr, observed = _placed_on_c1()
    failing = inputs(down("c1", at(0)), THREE[1])
    step1 = observe(call(xr, failing, observed, now=at(6)), url=True, ready=True)
    step2 = observe(call(xr, failing, step1, now=at(7)), url=True, ready=True)
    assert "endpoint-1-c2" in step2
    back = inputs(THREE[0], THREE[1])
    # Its endpoint left routing while c1 was down, so the routes are already clear of it: only the
    # drain period remains before the workload goes.
    assert step2["endpoint-0-c1"]["metadata"]["annotations"]["modelplane.ai/out-of-routing"] == (
        "cluster c1 is not Ready")
    xr["spec"]["drain"] = {"period": "30s"}
    rsp = call(xr, back, step2, now=at(8))
    st = status(rsp)
    assert [(r["index"], r["cluster"], r["phase"]) for r in st["removals"]] == [(0, "c1", "Draining")]
    assert st["removals"][0]["reason"] == f"replaced while its cluster was down (since {at(0)})"
    assert "endpoint-0-c1" not in desired(rsp) and "endpoint-1-c2" in desired(rsp)
    assert desired(rsp)["replica-0-c1"]["metadata"]["annotations"]["modelplane.ai/unrouted"] == at(8)
    assert rsp.meta.ttl.seconds == 10  # a drain is pending
    later = observe(rsp, url=True, ready=True)
    assert status(call(xr, back, later, now=at(8.25)))["removals"][0]["phase"] == "Draining"   # 15 s in
    done = call(xr, back, later, now=at(8.5))                                                  # 30 s in
    assert status(done)["removals"][0]["phase"] == "Deleting" and "replica-0-c1" not in desired(done)


def test_a_failed_cluster_that_is_deleted_evicts_its_held_replicas():
    xr, observed = _placed_on_c1()
    step1 = observe(call(xr, inputs(down("c1", at(0)), THREE[1]), observed, now=at(6)), url=True, ready=True)
    rsp = call(xr, inputs(THREE[1]), step1, now=at(7))
    [removal] = status(rsp)["removals"]
    assert (removal["cluster"], removal["cause"]) == ("c1", "Evicted")


def test_an_unobserved_cluster_times_out_from_its_creation():
    xr, observed = _placed_on_c1()
    unobserved = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster",
                  "metadata": {"name": "c1", "creationTimestamp": at(0)}, "spec": {}, "status": {}}
    rsp = call(xr, inputs(unobserved, THREE[1]), observed, now=at(3))
    assert rsp.meta.ttl.seconds == 60 and sorted(desired(rsp)) == sorted(observed)
    rsp = call(xr, inputs(unobserved, THREE[1]), observed, now=at(5))
    assert "replica-1-c2" in desired(rsp)


def test_a_bad_clock_in_the_context_is_fatal_and_names_the_key():
    xr, observed = _placed_on_c1()
    msg = fatal(call(xr, inputs(THREE[0]), observed, now="yesterday"))
    assert msg is not None and "context[modelplane.ai/now]" in msg and "RFC 3339" in msg


def test_without_a_clock_in_the_context_the_wall_clock_is_used():
    # The wall clock is read through modelplane.clock: stopped here, the answer is what that time
    # decides, and no other time (a skewed MODELPLANE_TEST_CLOCK included) can change it.
    xr, observed = _placed_on_c1()
    failing = inputs(down("c1", at(0)), THREE[1])
    with skewed.using(skewed.at(at(4.5))):
        held = call(xr, failing, observed)
    assert sorted(desired(held)) == sorted(observed) and held.meta.ttl.seconds == 30
    with skewed.using(skewed.at(at(6))):
        assert "replica-1-c2" in desired(call(xr, failing, observed))


def test_names_stay_dns_labels_and_stable_through_a_rollout():
    v1 = deployment(QWEN_DEMO, replicas=2)
    v1["metadata"]["name"] = "a-very-long-deployment-name-that-takes-most-of-the-label-budget"
    observed = _steady(v1, THREE)
    v2 = _new_image(v1)
    first = call(v2, inputs(*_live_clusters(THREE, observed)), observed)
    again = call(v2, inputs(*_live_clusters(THREE, observed)), observed)
    names = sorted(o["metadata"]["name"] for o in desired(first).values())
    assert names == sorted(o["metadata"]["name"] for o in desired(again).values())
    assert all(len(n) <= 63 and n == n.lower() for n in names)
    # The surge replica took a new index; the old replicas kept their names.
    assert {o["metadata"]["name"] for o in observed.values()} < set(names)


# --- which answers hold whatever the time (the server may give them again) -------------------


def _timeless(xr: dict, required: dict, observed: dict | None, now: str) -> bool:
    req = request(xr, observed=observed, required=required)
    req.context.update({"modelplane.ai/now": now})
    return compose_call(FN, functions.load(FN), req)[1]


def test_an_answer_is_cacheable_only_when_the_clock_decided_nothing():
    xr, observed = _placed_on_c1()
    failing = inputs(down("c1", at(0)), THREE[1])
    assert _timeless(xr, inputs(*THREE[:2]), observed, at(4.5))          # steady: nothing timed
    assert not _timeless(xr, failing, observed, at(4.5))                 # failover pending
    assert _timeless(xr, failing, observed, at(6))                       # failed over: stays so
    unobserved = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster",
                  "metadata": {"name": "c1", "creationTimestamp": at(0)}, "spec": {}, "status": {}}
    assert not _timeless(xr, inputs(unobserved, THREE[1]), observed, at(3))   # pending, past the TTL
    disabled = copy.deepcopy(xr)
    disabled["spec"]["failover"] = {"after": "0"}
    assert _timeless(disabled, failing, observed, at(600))               # down, but nothing will happen
    step1 = observe(call(xr, failing, observed, now=at(6)), url=True, ready=True)
    step2 = observe(call(xr, failing, step1, now=at(7)), url=True, ready=True)
    xr["spec"]["drain"] = {"period": "30s"}
    assert not _timeless(xr, inputs(THREE[0], THREE[1]), step2, at(8))   # a replica drains
    # and the server's rule holds: a timeless answer is the answer at any later time (the
    # response echoes the context, which holds the time: the rest must not change)
    assert _timeless(xr, failing, step1, at(7))
    first = call(xr, failing, step1, now=at(7))
    for now in (at(60), at(6000)):
        later = call(xr, failing, step1, now=now)
        later.context.CopyFrom(first.context)
        assert later.SerializeToString() == first.SerializeToString()
