"""The replica's side of the engine report: reading the observed ConfigMap, status and Serving."""
from __future__ import annotations

import json

from modelplane import conditions as C
from modelplane.observer import reports
from modelplane.workloads import engine_status as ES

from tests.observer import pods as P


def observed(data: dict | None) -> dict:
    """The Observe-only Object as provider-kubernetes reports it (the ConfigMap in atProvider)."""
    obj = {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object", "status": {}}
    if data is not None:
        obj["status"]["atProvider"] = {"manifest": {"apiVersion": "v1", "kind": "ConfigMap", "data": data}}
    return obj


def report_of(*pods) -> dict:
    (r,) = reports(list(pods))
    return observed(r.data())


def test_no_object_no_configmap_or_malformed_is_no_report():
    assert ES.read(None) is None
    assert ES.read(observed(None)) is None
    assert ES.read(observed({"engines": "not json"})) is None
    assert ES.read(observed({"engines": json.dumps([{"state": "Running"}])})) is None


def test_the_report_reads_back_as_written():
    got = ES.read(report_of(P.hub_401(name="a-1"), P.healthy(name="a-2")))
    assert [(s.pod, s.state, s.exit_code) for s in got] == [("a-1", "Terminated", 1), ("a-2", "Running", None)]
    entries = ES.status_entries(got)
    assert entries[0] == {"pod": "a-1", "engine": "qwen3-8b", "role": "standalone", "state": "Terminated",
                          "ready": False, "reason": "Error", "exitReason": "Error", "exitCode": 1,
                          "message": P.HF_401.strip()}
    assert entries[1] == {"pod": "a-2", "engine": "qwen3-8b", "role": "standalone", "state": "Running",
                          "ready": True}


def test_unknown_fields_from_a_newer_observer_are_ignored():
    got = ES.read(observed({"engines": json.dumps([{"pod": "a", "state": "Running", "gpuTemp": 71}])}))
    assert got == [ES.EngineState("a", state="Running")]


def test_ready_workloads_are_available_whatever_the_report():
    s = ES.serving([], ES.read(report_of(P.crash_loop(name="a-1"))))
    assert (s.status, s.reason) == (True, C.AVAILABLE)


def test_waiting_without_a_report_says_so():
    s = ES.serving(["qwen3-8b-0-prod-a-qwen3-8b"], None)
    assert (s.status, s.reason) == (False, C.CREATING)
    assert s.message == "waiting for qwen3-8b-0-prod-a-qwen3-8b; no engine report yet"


def test_waiting_with_healthy_engines_is_creating():
    s = ES.serving(["x"], ES.read(report_of(P.unschedulable(name="a-1"))))
    assert (s.status, s.reason, s.message) == (False, C.CREATING, "waiting for x")


def test_a_failing_engine_names_its_reason_and_tail():
    s = ES.serving(["x"], ES.read(report_of(P.oom_killed(name="a-1"), P.healthy(name="a-2"))))
    assert (s.status, s.reason) == (False, C.ENGINE_FAILING)
    assert s.message == ("pod a-1 engine qwen3-8b: CrashLoopBackOff, 3 restarts; last exit OOMKilled (code 137): "
                         + P.OOM_TAIL.strip())


def test_the_hub_401_reaches_the_condition_bounded():
    s = ES.serving(["x"], ES.read(report_of(P.hub_401(name="a-1"), P.image_pull(name="a-2"))))
    assert s.reason == C.ENGINE_FAILING
    assert s.message.startswith("pod a-1 engine qwen3-8b: Error; last exit Error (code 1): …")
    assert "Access to model meta-llama/Llama-3.1-8B-Instruct is restricted" in s.message
    assert s.message.endswith("(and 1 more failing)")
    assert len(s.message) < 520
