"""compose-model-replica: shapes, pods, claims, status, nothing lost, real gRPC."""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.validate.upstream import assert_valid

from tests.functions.replicas import FN, NAME, NS, engine, gang, member, pd, replica
from tests.support import call, conditions, desired, fatal, request, run, serve_process, status


def manifests(rsp) -> dict[str, dict]:
    """The remote manifests the Objects write (the Usages beside them hold the provider config; the
    Observe-only Object of the engine report writes nothing)."""
    return {n: o["spec"]["forProvider"]["manifest"] for n, o in desired(rsp).items()
            if o["kind"] == "Object" and o["spec"].get("managementPolicies") != ["Observe"]}


def of_kind(rsp, kind: str) -> list[dict]:
    return [m for _, m in sorted(manifests(rsp).items()) if m["kind"] == kind]


def pod_specs(rsp) -> list[dict]:
    out = [d["spec"]["template"]["spec"] for d in of_kind(rsp, "Deployment")
           if "endpoint-picker" not in str(d["metadata"]["labels"])]
    for lws in of_kind(rsp, "LeaderWorkerSet"):
        t = lws["spec"]["leaderWorkerTemplate"]
        out += [t["leaderTemplate"]["spec"], t["workerTemplate"]["spec"]]
    return out


def engine_of(pod: dict) -> dict:
    return next(c for c in pod["containers"] if c["name"] == "engine")


def env(pod: dict) -> list[str]:
    return [e["name"] for e in engine_of(pod).get("env", [])]


# ----- every composed resource is valid upstream -------------------------------
@pytest.mark.parametrize("xr", [replica(), replica([gang()], cache=True), replica([gang(command=False)], cache=True),
                                pd(), replica([engine(members=[member(claim="Synthetic")])])],
                         ids=["standalone", "gang-command", "gang-no-command", "prefill-decode", "synthetic"])
def test_every_composed_resource_passes_upstream_schemas(xr):
    rsp = run(FN, request(xr))
    assert fatal(rsp) is None
    for name, obj in desired(rsp).items():
        assert_valid(obj)
        if obj["kind"] == "Object":
            assert_valid(obj["spec"]["forProvider"]["manifest"])
        assert obj["metadata"]["namespace"] == NS, name


# ----- shapes ------------------------------------------------------------------
@dataclass
class Case:
    name: str
    xr: dict
    check: Callable[[Any], None]


def _standalone(rsp):
    (dep,) = of_kind(rsp, "Deployment")
    assert dep["spec"]["replicas"] == 3
    (svc,) = of_kind(rsp, "Service")
    assert svc["spec"]["ports"][0]["port"] == 8000
    (route,) = of_kind(rsp, "HTTPRoute")
    rule = route["spec"]["rules"][0]
    assert rule["matches"][0]["path"] == {"type": "PathPrefix", "value": f"/{NS}/{NAME}/"}
    assert rule["filters"][0]["urlRewrite"]["path"] == {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}
    assert rule["backendRefs"] == [{"name": "qwen3-8b-0-prod-a-qwen3-8b", "port": 8000}]
    assert route["spec"]["parentRefs"] == [{"name": "modelplane", "namespace": "modelplane-system"}]


def _custom_port(rsp):
    (svc,) = of_kind(rsp, "Service")
    assert svc["spec"]["ports"][0]["port"] == 9000


def _gang(rsp):
    (lws,) = of_kind(rsp, "LeaderWorkerSet")
    t = lws["spec"]["leaderWorkerTemplate"]
    assert (lws["spec"]["replicas"], t["size"]) == (2, 3)
    assert lws["spec"]["startupPolicy"] == "LeaderCreated"
    assert t["restartPolicy"] == "RecreateGroupOnPodRestart"
    (pool,) = of_kind(rsp, "InferencePool")
    assert pool["spec"]["selector"]["matchLabels"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
    assert pool["spec"]["endpointPickerRef"]["port"] == {"number": 9002}
    epp_svc = [s for s in of_kind(rsp, "Service") if s["metadata"]["name"] == pool["spec"]["endpointPickerRef"]["name"]]
    assert epp_svc and epp_svc[0]["spec"]["ports"][0]["port"] == 9002
    assert {k for k in ("ServiceAccount", "Role", "RoleBinding", "ConfigMap") if of_kind(rsp, k)} == \
        {"ServiceAccount", "Role", "RoleBinding", "ConfigMap"}
    (role,) = of_kind(rsp, "Role")
    assert any("inferencepools" in r["resources"] for r in role["rules"])
    (route,) = of_kind(rsp, "HTTPRoute")
    assert route["spec"]["rules"][0]["backendRefs"][0]["kind"] == "InferencePool"


def _gang_command_no_injection(rsp):
    for pod in pod_specs(rsp):
        assert "args" not in engine_of(pod)
        assert {"name": "models", "mountPath": "/mnt/models"} in engine_of(pod)["volumeMounts"]


def _gang_no_command_injects_model(rsp):
    for pod in pod_specs(rsp):
        assert engine_of(pod)["args"][0] == "/mnt/models", "vLLM v0.23.0 takes the model first"


def _leader_address(rsp):
    for pod in pod_specs(rsp):
        first = engine_of(pod)["env"][0]
        assert first == {"name": "MODELPLANE_LEADER_ADDRESS", "value": "$(LWS_LEADER_ADDRESS)"}


def _standalone_leader_is_itself(rsp):
    (pod,) = pod_specs(rsp)
    assert engine_of(pod)["env"][0]["valueFrom"] == {"fieldRef": {"fieldPath": "status.podIP"}}
    assert env(pod) == ["MODELPLANE_LEADER_ADDRESS", "HF_TOKEN"]


def _dra_claims(rsp):
    (rct,) = of_kind(rsp, "ResourceClaimTemplate")
    (req,) = rct["spec"]["spec"]["devices"]["requests"]
    assert req["name"] == "gpu"
    assert req["exactly"]["deviceClassName"] == "gpu.nvidia.com"
    assert req["exactly"]["allocationMode"] == "ExactCount"
    assert req["exactly"]["selectors"][0]["cel"]["expression"].startswith("device.capacity")
    (pod,) = pod_specs(rsp)
    assert pod["resourceClaims"] == [{"name": "devices", "resourceClaimTemplateName": rct["metadata"]["name"]}]
    assert engine_of(pod)["resources"]["claims"] == [{"name": "devices"}]


def _synthetic_not_claimed(rsp):
    assert of_kind(rsp, "ResourceClaimTemplate") == []
    (pod,) = pod_specs(rsp)
    assert "resourceClaims" not in pod and "claims" not in engine_of(pod).get("resources", {})


def _shm_and_pool(rsp):
    (pod,) = pod_specs(rsp)
    shm = next(v for v in pod["volumes"] if v["name"] == "dshm")
    assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": "16Gi"}
    assert pod["nodeSelector"] == {"modelplane.ai/pool": "l4"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]


def _prefill_decode(rsp):
    deps = {d["metadata"]["name"]: d for d in of_kind(rsp, "Deployment")}
    prefill, decode = deps[f"{NAME}-prefill"], deps[f"{NAME}-decode"]
    assert (prefill["spec"]["replicas"], decode["spec"]["replicas"]) == (1, 2)
    assert prefill["spec"]["template"]["metadata"]["labels"]["llm-d.ai/role"] == "prefill"
    assert decode["spec"]["template"]["metadata"]["labels"]["llm-d.ai/role"] == "decode"
    dspec = decode["spec"]["template"]["spec"]
    (sidecar,) = dspec["initContainers"]
    assert sidecar["restartPolicy"] == "Always" and "--vllm-port=8200" in sidecar["args"]
    assert "--port=8200" in engine_of(dspec)["args"]
    assert "initContainers" not in prefill["spec"]["template"]["spec"]
    (pool,) = of_kind(rsp, "InferencePool")
    assert pool["spec"]["selector"]["matchLabels"]["llm-d.ai/inferenceServing"] == "true"
    (cm,) = of_kind(rsp, "ConfigMap")
    text = cm["data"]["epp.yaml"]
    assert "pd-profile-handler" in text and "prefill-header-handler" in text
    (route,) = of_kind(rsp, "HTTPRoute")
    assert route["spec"]["rules"][0]["backendRefs"] == [
        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": pool["metadata"]["name"]}]
    assert of_kind(rsp, "Service") == [s for s in of_kind(rsp, "Service") if "epp" in s["metadata"]["name"]]


def _remote_namespace_never_deleted(rsp):
    ns = desired(rsp)[f"{NAME}-namespace"]
    assert ns["spec"]["forProvider"]["manifest"] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
    assert "Delete" not in ns["spec"]["managementPolicies"]


CASES = [
    Case("standalone: Deployment of copies + Service + route", replica([engine(copies=3)]), _standalone),
    Case("service port follows the container's first port",
         replica([engine(members=[member(args=["--port=9000"], ports=[{"containerPort": 9000}])])]), _custom_port),
    Case("gang: LWS size 1+nodes, pool over leaders, EPP pieces",
         replica([dict(gang(nodes=2), copies=2)], cache=True), _gang),
    Case("gang with a command gets the cache but no --model", replica([gang()], cache=True), _gang_command_no_injection),
    Case("gang without a command gets /mnt/models as its model", replica([gang(command=False)], cache=True),
         _gang_no_command_injects_model),
    Case("every gang pod gets MODELPLANE_LEADER_ADDRESS first", replica([gang()], cache=True), _leader_address),
    Case("standalone leader address is the pod IP, before user env",
         replica([engine(members=[member(args=["--model=x"], env=[{"name": "HF_TOKEN", "value": "t"}])])]),
         _standalone_leader_is_itself),
    Case("DRA devices become a ResourceClaimTemplate the pod claims", replica(), _dra_claims),
    Case("Synthetic devices are not claimed", replica([engine(members=[member(claim="Synthetic")])]),
         _synthetic_not_claimed),
    Case("shm sizeLimit, pool node selector, GPU toleration",
         replica([engine(members=[member(args=["--model=x"], shm="16Gi")])]), _shm_and_pool),
    Case("prefill/decode: roles, ratio, sidecar, one pool, P/D EPP", pd(), _prefill_decode),
    Case("remote namespace mirrors the team namespace and is kept", replica(), _remote_namespace_never_deleted),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_shapes(case: Case):
    rsp = run(FN, request(case.xr))
    assert fatal(rsp) is None
    case.check(rsp)


@pytest.mark.parametrize("args,injected", [
    (["--served-model-name=q"], True),
    (["--model=Qwen/Qwen3-8B"], False),
    (["--model", "Qwen/Qwen3-8B"], False),
    (["Qwen/Qwen3-8B", "--served-model-name=q"], False),
])
def test_model_injection_with_cache(args, injected):
    rsp = run(FN, request(replica([engine(members=[member(args=args)])], cache=True)))
    (pod,) = pod_specs(rsp)
    assert ("/mnt/models" in engine_of(pod)["args"]) is injected


def test_pods_are_never_privileged():
    for xr in (replica(), replica([gang()], cache=True), pd()):
        rsp = run(FN, request(xr))
        for m in manifests(rsp).values():
            text = str(m)
            for forbidden in ("privileged", "hostNetwork", "hostPID", "hostIPC", "hostPath", "securityContext"):
                assert forbidden not in text, (m["kind"], forbidden)


def test_names_are_stable_dns_labels_and_output_deterministic():
    long = replica([engine("a-very-long-engine-name-that-keeps-going-and-going")])
    first, second = run(FN, request(long)), run(FN, request(long))
    assert first.SerializeToString(deterministic=True) == second.SerializeToString(deterministic=True)
    import re
    for name, obj in desired(first).items():
        assert re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", name), name
        assert re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", obj["metadata"]["name"]), name
        if obj["kind"] == "Object":
            assert re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?",
                                obj["spec"]["forProvider"]["manifest"]["metadata"]["name"])


# ----- status ----------------------------------------------------------------
def observed_workloads(rsp, available: bool) -> dict[str, dict]:
    out = {}
    for name, obj in desired(rsp).items():
        m = obj["spec"]["forProvider"]["manifest"] if obj["kind"] == "Object" else {"kind": obj["kind"]}
        if m["kind"] in ("Deployment", "LeaderWorkerSet"):
            n = m["spec"]["replicas"] if available else 0
            st = {"availableReplicas": n} if m["kind"] == "Deployment" else {"readyReplicas": n}
            out[name] = {**copy.deepcopy(obj), "status": {"atProvider": {"manifest": {**m, "status": st}}}}
    return out


@pytest.mark.parametrize("xr", [replica([engine(copies=2)]), replica([gang()], cache=True), pd()],
                         ids=["standalone", "gang", "prefill-decode"])
@pytest.mark.parametrize("available", [True, False])
def test_ready_only_when_every_workload_reports_ready(xr, available):
    first = run(FN, request(xr))
    rsp = run(FN, request(xr, observed=observed_workloads(first, available)))
    assert status(rsp)["ready"] is available
    want = fnv1.STATUS_CONDITION_TRUE if available else fnv1.STATUS_CONDITION_FALSE
    assert conditions(rsp)["Serving"].status == want


def test_status_url_and_rewrite_path():
    st = status(run(FN, request(replica())))
    assert st["url"] == "http://203.0.113.10" and st["rewritePath"] == f"/{NS}/{NAME}/"


def test_url_omitted_while_gateway_address_unknown():
    st = status(run(FN, request(replica(gateway={"name": "modelplane", "namespace": "modelplane-system"}))))
    assert "url" not in st and st["rewritePath"] == f"/{NS}/{NAME}/"


def test_gateway_unknown_keeps_observed_route():
    first = run(FN, request(replica()))
    route = f"{NAME}-route"
    observed = {route: desired(first)[route]}
    rsp = run(FN, request(replica(gateway={}), observed=observed))
    assert desired(rsp)[route]["spec"]["forProvider"]["manifest"] == observed[route]["spec"]["forProvider"]["manifest"]
    assert conditions(rsp)["InputsResolved"].reason == "WaitingForInputs"


def test_two_worker_members_is_an_input_error():
    two = engine("g", [member("Leader"), member("Worker"), member("Worker")])
    msg = fatal(run(FN, request(replica([two], cache=True))))
    assert msg and "spec.engines[0].members" in msg


def test_real_grpc_subprocess():
    with serve_process(FN, "--insecure") as address:
        rsp = call(address, request(replica()))
    assert fatal(rsp) is None
    assert any(m["kind"] == "LeaderWorkerSet" for m in manifests(rsp).values()) is False
    assert of_kind(rsp, "Deployment")[0]["spec"]["replicas"] == 1
