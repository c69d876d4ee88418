"""compose-model-replica: the Secrets its pods read reach its cluster as replica-scoped copies.

Rows build a replica whose engine reads Secrets, answer the function's Secret
requirements (present, missing, not fetched yet), and check one part: the copy
Objects, the rewritten pod templates, the SecretsFound condition, what is held
back, and that no Secret value ever leaves the function.
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import json_format
from modelplane.validate.upstream import assert_valid
from modelplane.workloads import secrets as S
from modelplane.workloads import upgrade as U

from tests.functions.replicas import FN, NAME, NS, engine, member, replica
from tests.support import conditions, desired, fatal, request, run

TOKEN = "hf_not-a-real-token-9f3c2a"   # what must never leave the function
TOKEN_B64 = base64.b64encode(TOKEN.encode()).decode()


def secret(name: str, typ: str = "Opaque", **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NS}, "type": typ,
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in (data or {"token": TOKEN}).items()}}


def reads(**over: Any) -> dict:
    """An engine reading a Secret each of the four ways."""
    return member(
        args=["--model=Qwen/Qwen3-8B"],
        env=[{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}],
        envFrom=[{"secretRef": {"name": "engine-env"}}],
        volumeMounts=[{"name": "certs", "mountPath": "/etc/engine/certs", "readOnly": True}],
        pod={"volumes": [{"name": "certs", "secret": {"secretName": "tls"}}],
             "imagePullSecrets": [{"name": "registry"}]}, **over)


ALL = {"hf": secret("hf"), "engine-env": secret("engine-env", API_KEY="k"), "tls": secret("tls", **{"tls.crt": "c"}),
       "registry": secret("registry", "kubernetes.io/dockerconfigjson",
                           **{".dockerconfigjson": '{"auths":{"registry.example.com":{"auth":"dTpw"}}}'})}


def answered(found: dict[str, dict | None]) -> dict[str, list]:
    """Requirement answers: a Secret, or None for fetched-and-absent."""
    return {S.requirement(n): ([s] if s else []) for n, s in found.items()}


def copy_key(secret_name: str) -> str:
    return S.copy_name(NAME, secret_name)


def observed_ready(objs: dict[str, dict]) -> dict[str, dict]:
    """What Crossplane would observe after the provider created each: a Ready Object."""
    return {k: {**o, "status": {"conditions": [{"type": "Ready", "status": "True"}]}} for k, o in objs.items()}


def compose(xr: dict, found: dict[str, dict | None] | None, observed: dict | None = None):
    return run(FN, request(xr, observed=observed, required=answered(found) if found is not None else None))


def copies_of(rsp) -> dict[str, dict]:
    return {k: o for k, o in desired(rsp).items() if S.is_copy(o)}


def settled(xr: dict, found: dict[str, dict | None]):
    """Two calls: the copies, then (copies observed Ready) the workloads."""
    first = compose(xr, found)
    return compose(xr, found, observed_ready(copies_of(first)))


def pod_specs(rsp) -> list[dict]:
    out = []
    for o in desired(rsp).values():
        if o.get("kind") == "Object":
            out += S.pod_specs(o["spec"]["forProvider"]["manifest"])
    return out


# ----- requirements and copies ---------------------------------------------------------
def test_each_secret_the_pods_read_is_required_by_name_in_the_replica_namespace():
    rsp = compose(replica([engine(members=[reads()])]), None)
    want = {S.requirement(n): ("v1", "Secret", n, NS) for n in ("engine-env", "hf", "registry", "tls")}
    got = {k: (r.api_version, r.kind, r.match_name, r.namespace) for k, r in rsp.requirements.resources.items()}
    assert got == want


def test_each_found_secret_gets_a_shell_and_a_data_object_neither_holding_a_value():
    rsp = compose(replica([engine(members=[reads()])]), ALL)
    assert fatal(rsp) is None
    copies = copies_of(rsp)
    assert sorted(copies) == sorted([copy_key(n) for n in ALL] + [S.data_name(NAME, n) for n in ALL])
    for name, src in ALL.items():
        shell, data = copies[copy_key(name)], copies[S.data_name(NAME, name)]
        for obj in (shell, data):
            assert_valid(obj)
            assert_valid(obj["spec"]["forProvider"]["manifest"])
            assert obj["spec"]["providerConfigRef"]["name"] == "prod-a"
            manifest = obj["spec"]["forProvider"]["manifest"]
            assert manifest["metadata"]["name"] == copy_key(name) and manifest["metadata"]["namespace"] == NS
            assert manifest["type"] == src["type"]      # a pull secret stays kubernetes.io/dockerconfigjson
            assert set((manifest.get("data") or {}).values()) <= {"", "e30="}, manifest   # placeholders only
        # The shell creates and deletes the remote Secret, never updates it, and reads nothing.
        assert shell["spec"]["managementPolicies"] == ["Observe", "Create", "Delete"]
        assert "references" not in shell["spec"]
        # The data Object only observes and updates, carries the provider's finalizer from birth
        # (so the provider never writes it back with the data inside), and reads the Secret's data.
        assert data["spec"]["managementPolicies"] == ["Observe", "Update"]
        assert data["metadata"]["finalizers"] == ["finalizer.managedresource.crossplane.io"]
        assert "data" not in data["spec"]["forProvider"]["manifest"]
        assert data["spec"]["references"] == [{"patchesFrom": {
            "apiVersion": "v1", "kind": "Secret", "name": name, "namespace": NS, "fieldPath": "data"},
            "toFieldPath": "data"}]
        assert data["spec"]["watch"] is True          # rotation follows at once with --enable-watches
    assert copies[copy_key("registry")]["spec"]["forProvider"]["manifest"]["data"] == {".dockerconfigjson": "e30="}
    # The shell holds its cluster's provider config until it is gone, like every Object that deletes.
    usages = {o["spec"]["by"]["resourceRef"]["name"] for o in desired(rsp).values() if o["kind"] == "Usage"}
    assert {copy_key(n) for n in ALL} <= usages


def test_a_workload_waits_for_the_data_not_only_the_shell():
    xr = replica([engine(members=[reads()])])
    first = compose(xr, ALL)
    shells = observed_ready({k: o for k, o in copies_of(first).items() if k in {copy_key(n) for n in ALL}})
    assert deployments(compose(xr, ALL, shells)) == {}
    assert len(deployments(compose(xr, ALL, observed_ready(copies_of(first))))) == 1


def test_copy_names_are_replica_scoped_and_never_meet():
    assert S.copy_name("a-0-c", "x-hf") != S.copy_name("a-0-c-x", "hf")
    assert S.copy_name("chat-0-prod-a", "hf") != S.copy_name("chat-1-prod-a", "hf")
    long = S.copy_name("d" * 60 + "-0-prod-a", "s" * 250)
    assert len(long) <= 63 and long == S.copy_name("d" * 60 + "-0-prod-a", "s" * 250)


# ----- rewritten references, every pod template shape -------------------------------------
@dataclass
class Shape:
    name: str
    xr: dict
    templates: int                      # pod templates the shape composes for its engines


SHAPES = [
    Shape("Standalone", replica([engine(members=[reads()])]), 1),
    Shape("LeaderWorker", replica([engine("qwen3-coder", [reads(role="Leader", pool="h200"),
                                                          reads(role="Worker", pool="h200")])], cache=True), 2),
    Shape("PrefillDecode", replica([engine("prefill", [reads()], phase="Prefill"),
                                    engine("decode", [reads()], phase="Decode")], mode="PrefillDecode"), 2),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_every_pod_template_reads_the_copies_and_nothing_else(shape):
    rsp = settled(shape.xr, ALL)
    assert fatal(rsp) is None
    engines = [p for p in pod_specs(rsp) if any(c["name"] == "engine" for c in p["containers"])]
    assert len(engines) == shape.templates
    for spec in engines:
        assert sorted(S.uses(spec)) == sorted(copy_key(n) for n in ALL), spec
        eng = next(c for c in spec["containers"] if c["name"] == "engine")
        assert eng["env"][-1]["valueFrom"]["secretKeyRef"] == {"name": copy_key("hf"), "key": "token"}
        assert eng["envFrom"] == [{"secretRef": {"name": copy_key("engine-env")}}]
        assert {"name": "certs", "secret": {"secretName": copy_key("tls")}} in spec["volumes"]
        assert spec["imagePullSecrets"] == [{"name": copy_key("registry")}]


# ----- copies first, missing Secrets, not fetched yet -------------------------------------
def deployments(rsp) -> dict[str, dict]:
    return {k: o for k, o in desired(rsp).items()
            if o.get("kind") == "Object" and o["spec"]["forProvider"]["manifest"]["kind"] == "Deployment"}


def test_a_new_workload_waits_for_its_copies_and_says_so():
    rsp = compose(replica([engine(members=[reads()])]), ALL)
    assert deployments(rsp) == {}
    serving = conditions(rsp)["Serving"]
    assert serving.status == fnv1.STATUS_CONDITION_FALSE and "after the copies of Secret(s) engine-env, hf, registry, tls" in serving.message
    assert conditions(rsp)[S.SECRETS_FOUND].reason == S.FOUND


def test_a_running_workload_keeps_its_spec_until_its_copies_exist_then_rolls_to_them():
    """The upgrade: a Deployment composed before copies existed reads the original names."""
    xr = replica([engine(members=[reads()])])
    before = settled(xr, ALL)
    (key,) = deployments(before)
    old = json.loads(json.dumps(deployments(before)[key]))
    for spec in S.pod_specs(old["spec"]["forProvider"]["manifest"]):   # as an older release composed it
        S._rewrite_spec(spec, {copy_key(n): n for n in ALL})
    held = compose(xr, ALL, {key: old})
    assert deployments(held)[key]["spec"] == old["spec"]                 # kept: no restart onto missing copies
    rolled = compose(xr, ALL, {key: old, **observed_ready(copies_of(held))})
    assert deployments(rolled)[key]["spec"] == deployments(before)[key]["spec"]


def test_a_missing_secret_is_named_with_the_fix_and_the_workload_still_composed():
    found = {**ALL, "hf": None, "registry": None}
    rsp = settled(replica([engine(members=[reads()])]), found)
    assert len(deployments(rsp)) == 1
    assert sorted(copies_of(rsp)) == sorted(k for n in ("engine-env", "tls") for k in (copy_key(n), S.data_name(NAME, n)))
    cond = conditions(rsp)[S.SECRETS_FOUND]
    assert (cond.status, cond.reason) == (fnv1.STATUS_CONDITION_FALSE, "NotFound")
    assert cond.message == (
        "Secret(s) hf, registry not found in namespace ml-team: pods that read them cannot start; create them: "
        "kubectl -n ml-team create secret generic hf --from-literal=token=<value>; "
        "kubectl -n ml-team create secret docker-registry registry --docker-server=<registry> "
        "--docker-username=<user> --docker-password=<token>")


def test_an_optional_secret_that_is_missing_is_no_failure():
    xr = replica([engine(members=[member(args=["--model=x"], envFrom=[{"secretRef": {"name": "extra",
                                                                                     "optional": True}}])])])
    rsp = settled(xr, {"extra": None})
    cond = conditions(rsp)[S.SECRETS_FOUND]
    assert cond.status == fnv1.STATUS_CONDITION_TRUE and "optional Secret(s) extra not found" in cond.message   # 1: True
    assert len(deployments(rsp)) == 1


def test_not_fetched_yet_keeps_what_runs_and_composes_nothing_new():
    xr = replica([engine(members=[reads()])])
    running = settled(xr, ALL)
    observed = {k: o for k, o in desired(running).items() if o.get("kind") in ("Object", "Usage")}
    rsp = compose(xr, None, observed_ready(observed))
    assert deployments(rsp) == deployments(running)
    assert sorted(copies_of(rsp)) == sorted(copies_of(running))
    cond = conditions(rsp)[S.SECRETS_FOUND]
    assert (cond.status, cond.reason) == (fnv1.STATUS_CONDITION_UNKNOWN, S.WAITING)
    fresh = compose(xr, None)
    assert deployments(fresh) == {} and copies_of(fresh) == {}


def test_a_copy_nothing_reads_any_more_goes_with_its_usage():
    xr = replica([engine(members=[reads()])])
    running = settled(xr, ALL)
    observed = observed_ready({k: o for k, o in desired(running).items() if o.get("kind") in ("Object", "Usage")})
    plain = replica([engine(members=[member(args=["--model=Qwen/Qwen3-8B"])])])
    rsp = compose(plain, {}, observed)
    assert copies_of(rsp) == {}
    assert not [k for k in desired(rsp) if any(copy_key(n) in k for n in ALL)]
    assert conditions(rsp)[S.SECRETS_FOUND].message == "the pods read no Secrets"


# ----- no value ever leaves ---------------------------------------------------------------
def test_no_secret_value_reaches_any_output():
    """Not the spec of a copy, not a status, condition, event or annotation: the whole response is searched,
    also when the provider (without --sanitize-secrets) reported a copy's data in its observed status."""
    xr = replica([engine(members=[reads()])])
    first = compose(xr, ALL)
    leaky = observed_ready(copies_of(first))
    for obj in leaky.values():
        obj["status"]["atProvider"] = {"manifest": {**obj["spec"]["forProvider"]["manifest"],
                                                    "data": {"token": TOKEN_B64}}}
    for rsp in (first, compose(xr, ALL, leaky), compose(xr, {**ALL, "hf": None}, leaky)):
        text = json_format.MessageToJson(rsp)
        assert TOKEN not in text and TOKEN_B64 not in text
        for name, src in ALL.items():
            for value in src["data"].values():
                assert value not in text, name


# ----- the pod template ---------------------------------------------------------------------
def test_only_secret_volumes_reach_the_pod_and_mounts_follow_modelplanes_own():
    m = member(args=["--model=x"], volumeMounts=[{"name": "certs", "mountPath": "/etc/certs"}],
               pod={"volumes": [{"name": "certs", "secret": {"secretName": "tls", "items": [
                   {"key": "tls.crt", "path": "tls.crt"}], "defaultMode": 256}},
                   {"name": "host", "hostPath": {"path": "/"}}]})
    rsp = settled(replica([engine(members=[m])]), {"tls": secret("tls")})
    (spec,) = [p for p in pod_specs(rsp) if any(c["name"] == "engine" for c in p["containers"])]
    assert [v["name"] for v in spec["volumes"]] == ["dshm", "certs"]
    assert spec["volumes"][1]["secret"] == {"secretName": copy_key("tls"), "items": [
        {"key": "tls.crt", "path": "tls.crt"}], "defaultMode": 256}
    eng = spec["containers"][0]
    assert eng["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"},
                                   {"name": "certs", "mountPath": "/etc/certs"}]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_every_engine_container_falls_back_to_its_log_on_error(shape):
    rsp = settled(shape.xr, ALL)
    engines = [c for p in pod_specs(rsp) for c in p["containers"] if c["name"] == "engine"]
    assert len(engines) == shape.templates
    assert {c["terminationMessagePolicy"] for c in engines} == {"FallbackToLogsOnError"}


# ----- upgrading a running replica ------------------------------------------------------------
def before_upgrade(rsp) -> dict[str, dict]:
    """The workloads of ``rsp`` as the release before this one composed them."""
    out = {}
    for key, obj in deployments(rsp).items():
        old = json.loads(json.dumps(obj))
        old["spec"]["forProvider"]["manifest"] = U.legacy(old["spec"]["forProvider"]["manifest"],
                                                          {n: copy_key(n) for n in ALL})
        out[key] = old
    return out


def test_an_upgrade_restarts_no_running_workload_that_reads_no_secret():
    """terminationMessagePolicy alone never rolls a running Deployment; a new one gets it."""
    xr = replica([engine(members=[member(args=["--model=Qwen/Qwen3-8B"])])])
    fresh = compose(xr, {})
    (key,) = deployments(fresh)
    old = before_upgrade(fresh)
    assert "terminationMessagePolicy" not in json.dumps(old)
    upgraded = compose(xr, {}, old)
    assert deployments(upgraded)[key]["spec"] == old[key]["spec"]
    # A real change (new args) rolls the pods anyway, and then they get it.
    changed = compose(replica([engine(members=[member(args=["--model=Qwen/Qwen3-8B", "--max-model-len=8192"])])]),
                      {}, old)
    (engine_c,) = [c for p in pod_specs(changed) for c in p["containers"] if c["name"] == "engine"]
    assert engine_c["terminationMessagePolicy"] == "FallbackToLogsOnError"


def test_an_upgrade_keeps_a_running_workload_whose_secret_is_only_on_its_cluster():
    """A platform team may have created the Secret on the workload cluster by hand: while the control
    plane has none, the pods keep reading it by its own name (rewriting them would break them)."""
    xr = replica([engine(members=[reads()])])
    old = before_upgrade(settled(xr, ALL))
    (key,) = old
    held = compose(xr, {n: None for n in ALL}, old)
    assert deployments(held)[key]["spec"] == old[key]["spec"]
    assert conditions(held)[S.SECRETS_FOUND].reason == "NotFound"
