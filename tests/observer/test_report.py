"""Reports: pods grouped per replica, in the pods' own namespace, owned by the pods; the loop
writes only what changed and survives the API server's errors."""
from __future__ import annotations

import dataclasses
import json
import threading

from modelplane.kube.client import ApiError
from modelplane.observer import Observer, Settings, reports
from modelplane.observer.report import differs, updated
from modelplane.workloads.engine_status import MAX_ENGINES, EngineLoad, report_name

from tests.observer import pods as P


def test_one_report_per_replica_in_the_pods_namespace():
    got = reports([
        P.healthy(name="a-1"), P.crash_loop(name="a-2"),
        P.healthy(name="b-1", replica="1"),
        P.oom_killed(name="c-1", namespace="other-team"),
    ])
    assert [(r.namespace, r.name, [o.name for o in r.owners]) for r in got] == [
        ("ml-team", report_name("qwen3-8b", "0"), ["a-1", "a-2"]),
        ("ml-team", report_name("qwen3-8b", "1"), ["b-1"]),
        ("other-team", report_name("qwen3-8b", "0"), ["c-1"]),
    ]
    cm = got[0].manifest()
    assert cm["metadata"]["namespace"] == "ml-team"
    assert cm["metadata"]["name"] == "modelplane-engines-qwen3-8b-0"
    assert cm["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "a-1", "uid": "uid-a-1"},
        {"apiVersion": "v1", "kind": "Pod", "name": "a-2", "uid": "uid-a-2"}]
    engines = json.loads(cm["data"]["engines"])
    assert [e["pod"] for e in engines] == ["a-2", "a-1"], "failing first"
    assert engines[0]["reason"] == "CrashLoopBackOff" and engines[0]["exitCode"] == 1
    assert "load" not in cm["data"], "engine load is a seam, not written yet"


def test_engine_load_has_its_own_section_when_measured():
    (r,) = reports([P.healthy(name="a-1")])
    measured = dataclasses.replace(r, load=(EngineLoad("a-1", waiting=3, running=12, kv_cache_usage=0.41),))
    assert json.loads(measured.data()["load"]) == [{"pod": "a-1", "waiting": 3, "running": 12, "kvCacheUsage": 0.41}]
    assert measured.data()["engines"] == r.data()["engines"]


def test_pods_without_the_replica_labels_or_leaving_are_skipped():
    stray = P.healthy(name="x")
    del stray["metadata"]["labels"]["modelplane.ai/replica"]
    leaving = P.crash_loop(name="y")
    leaving["metadata"]["deletionTimestamp"] = "2026-11-28T12:00:00Z"
    assert reports([stray, leaving]) == []


def test_a_large_gang_is_cut_at_the_limit_and_counted():
    many = [P.healthy(name=f"w-{i:02}") for i in range(MAX_ENGINES + 4)] + [P.oom_killed(name="w-99")]
    (r,) = reports(many)
    data = r.data()
    assert len(json.loads(data["engines"])) == MAX_ENGINES
    assert json.loads(data["engines"])[0]["pod"] == "w-99", "the failing one is never cut"
    assert data["omitted"] == "5"


def test_differs_and_updated_keep_what_others_set():
    (r,) = reports([P.healthy(name="a-1")])
    current = r.manifest() | {"metadata": {**r.manifest()["metadata"], "resourceVersion": "7",
                                           "labels": {**r.labels(), "team": "x"}}}
    assert not differs(current, r)
    (r2,) = reports([P.crash_loop(name="a-1")])
    assert differs(current, r2)
    new = updated(current, r2)
    assert new["metadata"]["resourceVersion"] == "7"
    assert new["metadata"]["labels"]["team"] == "x"
    assert new["data"] == r2.data()


class FakeAPI:
    """The API server as the observer calls it: pods to list, ConfigMaps by namespace and name."""

    def __init__(self, pods):
        self.pods = pods
        self.configmaps: dict[tuple[str, str], dict] = {}
        self.calls: list[tuple[str, str]] = []
        self.fail_list = 0

    def request(self, method, path, body=None, query=None):
        self.calls.append((method, path))
        parts = path.strip("/").split("/")
        if path == "/api/v1/pods":
            assert query == {"labelSelector": "modelplane.ai/deployment,modelplane.ai/replica,"
                                              "modelplane.ai/engine,modelplane.ai/role"}
            if self.fail_list:
                self.fail_list -= 1
                raise ApiError(503, "ServiceUnavailable", "etcd leader changed")
            return {"items": self.pods}
        ns = parts[3]
        if method == "GET":
            if (ns, parts[5]) not in self.configmaps:
                raise ApiError(404, "NotFound", "configmaps not found")
            return self.configmaps[(ns, parts[5])]
        assert body["metadata"]["namespace"] == ns, "a report is written in its own namespace"
        self.configmaps[(ns, body["metadata"]["name"])] = body
        return body


def test_the_loop_writes_once_then_only_changes():
    api = FakeAPI([P.healthy(name="a-1")])
    obs = Observer(api)
    assert obs.once().written == ["ml-team/modelplane-engines-qwen3-8b-0"]
    api.calls.clear()
    assert obs.once().written == []
    assert api.calls == [("GET", "/api/v1/pods")], "an unchanged report costs no call"
    api.pods = [P.crash_loop(name="a-1")]
    assert obs.once().written == ["ml-team/modelplane-engines-qwen3-8b-0"]
    assert ("PUT", "/api/v1/namespaces/ml-team/configmaps/modelplane-engines-qwen3-8b-0") in api.calls
    stored = api.configmaps[("ml-team", "modelplane-engines-qwen3-8b-0")]
    assert json.loads(stored["data"]["engines"])[0]["reason"] == "CrashLoopBackOff"


def test_a_report_deleted_by_hand_comes_back_at_the_full_resync():
    api = FakeAPI([P.healthy(name="a-1")])
    obs = Observer(api, Settings(full_every=3))
    obs.once()
    api.configmaps.clear()
    assert obs.once().written == []
    assert obs.once().written == ["ml-team/modelplane-engines-qwen3-8b-0"]


def test_a_failed_write_is_reported_and_retried():
    api = FakeAPI([P.healthy(name="a-1")])
    real = api.request

    def refuse_post(method, path, body=None, query=None):
        if method == "POST":
            raise ApiError(403, "Forbidden", "configmaps is forbidden")
        return real(method, path, body, query)

    api.request = refuse_post
    obs = Observer(api)
    got = obs.once()
    assert got.written == [] and got.failed == [
        "ml-team/modelplane-engines-qwen3-8b-0: 403 Forbidden: configmaps is forbidden"]
    api.request = real
    assert obs.once().written == ["ml-team/modelplane-engines-qwen3-8b-0"]


def test_run_backs_off_on_list_errors_and_stops_when_told():
    api = FakeAPI([P.healthy(name="a-1")])
    api.fail_list = 2
    obs = Observer(api, Settings(interval=0.01, max_backoff=0.05))
    passes = []

    def on_pass(p):
        passes.append(p)
        obs.stop.set()

    guard = threading.Timer(60, obs.stop.set)  # a hang guard, not a verdict: passes stop it first
    guard.start()
    try:
        obs.run(on_pass)
    finally:
        guard.cancel()
    assert passes, "stopped by the hang guard before a pass succeeded"
    assert [m for m, p in api.calls if p == "/api/v1/pods"] == ["GET"] * 3, "two failures, then a pass"
    assert passes[0].written == ["ml-team/modelplane-engines-qwen3-8b-0"]
