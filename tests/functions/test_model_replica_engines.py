"""compose-model-replica reports what its engines say: an Observe-only Object reads the engine
observer's ConfigMap; status.engines and the Serving condition come from it; adding it to a
running replica changes nothing it already composed (no engine restarts)."""
from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.observer import reports
from modelplane.workloads import engine_status as ES

from tests.functions.replicas import FN, NS, replica
from tests.observer import pods as P
from tests.support import conditions, desired, fatal, request, run, status

WORKLOAD = "qwen3-8b-0-prod-a-qwen3-8b-deployment"


def report_object(*pods) -> dict:
    """The Observe-only Object as provider-kubernetes reports it once the ConfigMap exists."""
    (r,) = reports(list(pods))
    return {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
            "status": {"atProvider": {"manifest": r.manifest()},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]}}


def deployment_ready(ready: bool) -> dict:
    replicas = 1 if ready else 0
    return {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
            "status": {"atProvider": {"manifest": {"status": {
                "observedGeneration": 1, "replicas": 1, "readyReplicas": replicas, "availableReplicas": replicas,
                "updatedReplicas": 1}}}}}


def test_the_report_is_observed_never_written():
    rsp = run(FN, request(replica()))
    assert fatal(rsp) is None
    obj = desired(rsp)[ES.KEY]
    assert obj["spec"]["managementPolicies"] == ["Observe"]
    assert obj["metadata"]["namespace"] == NS
    assert obj["spec"]["forProvider"]["manifest"] == {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "modelplane-engines-qwen3-8b-0", "namespace": NS}}
    assert rsp.desired.resources[ES.KEY].ready == 1, "an absent report never holds the replica"


def test_no_report_yet_is_not_a_failure():
    rsp = run(FN, request(replica()))
    serving = conditions(rsp)["Serving"]
    assert (serving.status, serving.reason) == (fnv1.STATUS_CONDITION_FALSE, "Creating")
    assert serving.message.endswith("; no engine report yet")
    assert "engines" not in status(rsp)


def test_a_failing_engine_is_the_serving_reason_with_its_words():
    rsp = run(FN, request(replica(), observed={ES.KEY: report_object(P.hub_401(name="a-1")),
                                               WORKLOAD: deployment_ready(False)}))
    serving = conditions(rsp)["Serving"]
    assert serving.reason == "EngineFailing"
    assert serving.message.startswith("pod a-1 engine qwen3-8b: Error; last exit Error (code 1): …")
    assert "GatedRepoError: 401 Client Error" in serving.message
    (engine,) = status(rsp)["engines"]
    assert (engine["pod"], engine["state"], engine["exitCode"]) == ("a-1", "Terminated", 1)
    assert "Access to model meta-llama/Llama-3.1-8B-Instruct is restricted" in engine["message"]


def test_ready_workloads_are_available_and_still_show_their_engines():
    rsp = run(FN, request(replica(), observed={ES.KEY: report_object(P.healthy(name="a-1")),
                                               WORKLOAD: deployment_ready(True)}))
    serving = conditions(rsp)["Serving"]
    assert (serving.status, serving.reason) == (fnv1.STATUS_CONDITION_TRUE, "Available")
    assert status(rsp)["engines"] == [{"pod": "a-1", "engine": "qwen3-8b", "role": "standalone",
                                       "state": "Running", "ready": True}]


def test_upgrading_a_running_replica_adds_the_report_and_changes_nothing_else():
    """A replica composed before the engine report existed: every child it had is desired again
    byte for byte (so no pod template changes and no engine restarts); only the report's Object
    is new (Observe-only, it deletes nothing remotely, so no Usage holds a provider config for it)."""
    now = desired(run(FN, request(replica())))
    before = {k: v for k, v in now.items() if k != ES.KEY}
    assert any(o["spec"]["forProvider"]["manifest"]["kind"] == "Deployment" for o in before.values()
               if o["kind"] == "Object"), "nothing composed"
    again = desired(run(FN, request(replica(), observed=before, desired=before)))
    assert {k: again[k] for k in before} == before
    assert sorted(set(again) - set(before)) == [ES.KEY]
