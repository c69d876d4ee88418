"""The engine observer against a real kube-apiserver, signed in as the service account
compose-inference-cluster composes for it, with exactly the rights it composes.

Engine pods are made from the pod template compose-model-replica composes (so they carry
the labels it sets), their status is written through the status subresource as a kubelet
would, and the observer runs as its own process (``modelplane engine-observer``). Waits
are on conditions with generous hang guards, never on time as a verdict.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from modelplane.kube.client import ApiError, Client
from modelplane.platform import engine_observer as EO
from modelplane.workloads import engine_status as ES

from tests.functions.replicas import FN, replica
from tests.observer import pods as P
from tests.support import conditions, desired, request, run, status

TEAM, OTHER = "obs-team-a", "obs-team-b"
HANG_GUARD = 90.0


def wait_for(what: str, probe, guard: float = HANG_GUARD):
    """``probe()`` until it returns something truthy; fails naming ``what`` after the hang guard."""
    deadline = time.monotonic() + guard
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except ApiError as err:
            last = err
        if last and not isinstance(last, ApiError):
            return last
        time.sleep(0.2)
    pytest.fail(f"{what}: not seen within {guard:.0f} s (last: {last})")


def engine_pod(name: str, namespace: str, deployment: str = "qwen3-8b") -> dict:
    """A pod as the Deployment compose-model-replica composes would make it, bound to a node."""
    xr = replica()
    xr["metadata"]["namespace"] = namespace
    xr["spec"]["deployment"] = deployment
    (dep,) = [o["spec"]["forProvider"]["manifest"] for o in desired(run(FN, request(xr))).values()
              if o["kind"] == "Object" and o["spec"]["forProvider"]["manifest"]["kind"] == "Deployment"]
    template = dep["spec"]["template"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": template["metadata"]["labels"]},
            "spec": {**template["spec"], "nodeName": "gpu-node-1"}}


def set_status(admin: Client, pod: dict, shaped: dict) -> None:
    """Write a kubelet-shaped status (from tests/observer/pods.py) through the status subresource."""
    path = f"/api/v1/namespaces/{pod['metadata']['namespace']}/pods/{pod['metadata']['name']}/status"
    admin.request("PATCH", path, {"status": shaped["status"]}, content_type="application/merge-patch+json")


def configmap(admin: Client, namespace: str, name: str) -> dict:
    return admin.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/{name}")


@pytest.fixture
def observer_account(apiserver, tmp_path) -> Path:
    """The observer's ServiceAccount, ClusterRole and binding as composed; a token for it in a folder
    shaped as a pod's service-account mount."""
    admin = apiserver.client()
    for ns in ("modelplane-system", TEAM, OTHER):
        admin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        # No controller-manager here to make each namespace's default account; pods need it.
        admin.apply({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": ns}})
    composed = EO.manifests("unused")
    for key in EO.KEYS[:3]:
        admin.apply(composed[key])
    token = admin.request("POST", f"/api/v1/namespaces/modelplane-system/serviceaccounts/{EO.NAME}/token",
                          {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                           "spec": {"expirationSeconds": 3600}})["status"]["token"]
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text(token)
    (sa / "ca.crt").write_bytes(apiserver.paths["ca.crt"].read_bytes())
    return sa


def test_the_observer_reports_engines_in_their_own_namespace(apiserver, observer_account, tmp_path):
    admin = apiserver.client()
    crashing = engine_pod("qwen3-8b-0-prod-a-qwen3-8b-5c7d9-x1", TEAM)
    healthy = engine_pod("llama-0-prod-a-llama-6f4b2-y1", OTHER, deployment="llama")
    for p in (crashing, healthy):
        admin.create(p)
    set_status(admin, crashing, P.hub_401())
    set_status(admin, healthy, P.healthy())

    log = (tmp_path / "observer.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "modelplane.cli", "engine-observer", "--server", apiserver.url,
                             "--serviceaccount-dir", str(observer_account), "--interval", "0.5"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        name = ES.report_name("qwen3-8b", 0)
        got = wait_for("the crashing replica's report", lambda: configmap(admin, TEAM, name))
        (engine,) = json.loads(got["data"]["engines"])
        assert engine["pod"] == crashing["metadata"]["name"]
        assert (engine["state"], engine["exitCode"]) == ("Terminated", 1)
        assert "401 Client Error" in engine["message"]
        assert [o["name"] for o in got["metadata"]["ownerReferences"]] == [crashing["metadata"]["name"]]

        other = wait_for("the other team's report", lambda: configmap(admin, OTHER, ES.report_name("llama", 0)))
        assert json.loads(other["data"]["engines"])[0]["state"] == "Running"
        # Each report in its pods' namespace only.
        for ns in (OTHER, "modelplane-system", "default"):
            with pytest.raises(ApiError) as err:
                configmap(admin, ns, name)
            assert err.value.code == 404
        listed = admin.request("GET", "/api/v1/configmaps", query={"labelSelector": "modelplane.ai/managed-by="
                                                                                     "engine-observer"})
        pods = admin.request("GET", "/api/v1/pods", query={"labelSelector": "modelplane.ai/engine"})["items"]
        assert {c["metadata"]["namespace"] for c in listed["items"]} <= {p["metadata"]["namespace"] for p in pods}

        # The engine restarts into a crash loop after an OOM kill: the report follows.
        set_status(admin, crashing, P.oom_killed())
        changed = wait_for("the OOM kill in the report", lambda: (
            (cm := configmap(admin, TEAM, name)) and "OOMKilled" in cm["data"]["engines"] and cm))

        # compose-model-replica, through the real pipeline, reads it back from its Observe-only Object
        # (provider-kubernetes puts the remote object in status.atProvider.manifest).
        xr = replica()
        xr["metadata"]["namespace"] = TEAM
        rsp = run(FN, request(xr, observed={ES.KEY: {
            "apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
            "status": {"atProvider": {"manifest": changed}}}}))
        assert desired(rsp)[ES.KEY]["spec"]["forProvider"]["manifest"]["metadata"] == {"name": name,
                                                                                       "namespace": TEAM}
        (reported,) = status(rsp)["engines"]
        assert (reported["pod"], reported["exitReason"], reported["restarts"]) == (
            crashing["metadata"]["name"], "OOMKilled", 3)
        serving = conditions(rsp)["Serving"]
        assert serving.reason == "EngineFailing"
        assert "CrashLoopBackOff, 3 restarts; last exit OOMKilled (code 137)" in serving.message

        # Least privilege: the observer's token reads no Secret and no pod log.
        sa = Client(apiserver.url, observer_account / "ca.crt", token_file=observer_account / "token")
        for path in (f"/api/v1/namespaces/{TEAM}/secrets",
                     f"/api/v1/namespaces/{TEAM}/pods/{crashing['metadata']['name']}/log"):
            with pytest.raises(ApiError) as err:
                sa.request("GET", path)
            assert err.value.code == 403, path
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        log.close()
        for p in (crashing, healthy):
            try:
                admin.delete(p)
            except ApiError:
                pass
    assert code == 0, (tmp_path / "observer.log").read_text()[-2000:]
