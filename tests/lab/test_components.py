"""The lab's process side without processes: command lines, kwok stages, LWS wiring, state, stand-in."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from modelplane.kube import components as C
from modelplane.lab import remote, standin
from modelplane.lab.state import Component, LabState, start_ticks
from modelplane.validate.upstream import UpstreamSchemas


def test_kwok_stages_cover_the_lifecycle_and_parse():
    stages = C.kwok_stages()
    assert [(s["metadata"]["name"], s["spec"]["resourceRef"]["kind"]) for s in stages] == [
        ("lab-node-ready", "Node"), ("lab-pod-running", "Pod"), ("lab-pod-succeeded", "Pod"), ("lab-pod-gone", "Pod")]
    # Only a Job's pods finish; every other pod keeps running.
    owners = stages[2]["spec"]["selector"]["matchExpressions"][2]
    assert owners == {"key": ".metadata.ownerReferences.[].kind", "operator": "In", "values": ["Job"]}
    assert stages[3]["spec"]["next"] == {"delete": True}
    assert list(yaml.safe_load_all(C.dump_all(stages))) == stages


def test_controllers_talk_to_their_own_cluster_on_loopback_without_leader_election(tmp_path):
    kc = tmp_path / "kubeconfig"
    kcm = C.controller_manager(Path("/bin/kcm"), kc, 1234, tmp_path / "c", tmp_path / "sa.key", tmp_path / "ca.crt")
    sched = C.scheduler(Path("/bin/ks"), kc, 2345, tmp_path / "s")
    for argv, port in ((kcm, 1234), (sched, 2345)):
        assert f"--kubeconfig={kc}" in argv
        assert "--bind-address=127.0.0.1" in argv and f"--secure-port={port}" in argv
        assert "--leader-elect=false" in argv
    kwok = C.kwok(Path("/bin/kwok"), kc, 3456, tmp_path / "stages.yaml", "10.200.0.1")
    assert "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake" in kwok
    assert "--server-address=127.0.0.1:3456" in kwok


def test_lws_runs_out_of_cluster_with_loopback_webhooks(tmp_path):
    cfg = C.lws_config(9443, 8081, tmp_path)
    assert cfg["internalCertManagement"] == {"enable": False}
    assert cfg["leaderElection"] == {"leaderElect": False}
    assert cfg["webhook"] == {"host": "127.0.0.1", "port": 9443, "certDir": str(tmp_path)}
    hooks = C.lws_webhooks(9443, "Q0E=")
    schemas = UpstreamSchemas.load()
    assert [schemas.validate(h) for h in hooks] == [[], []]
    by_name = {w["name"]: w for h in hooks for w in h["webhooks"]}
    assert set(by_name) == {"mleaderworkerset.kb.io", "mpod.kb.io", "vleaderworkerset.kb.io", "vpod.kb.io"}
    assert by_name["mpod.kb.io"]["clientConfig"]["url"] == "https://127.0.0.1:9443/mutate--v1-pod"
    # Pod webhooks see LWS pods only, so a stopped controller cannot block other pods.
    assert by_name["mpod.kb.io"]["objectSelector"]["matchExpressions"][0]["key"] == C.LWS_LABEL
    assert "objectSelector" not in by_name["mleaderworkerset.kb.io"]
    assert schemas.validate(C.disaggregatedset_stub()) == []


def test_a_recycled_pid_is_not_mistaken_for_the_lab_process(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        comp = Component("x", "", proc.pid, start_ticks(proc.pid), str(tmp_path / "log"))
        assert comp.alive()
        assert not Component("x", "", proc.pid, (comp.ticks or 0) + 1, "").alive()  # same pid, other process
        assert comp.stop(grace=5)
        assert not comp.alive()
        assert proc.returncode is not None or proc.wait(5) is not None
    finally:
        proc.kill()
    assert not comp.stop()  # stopping twice is a no-op


def test_state_round_trips(tmp_path):
    state = LabState(directory="d", root=str(tmp_path),
                     components=[Component("etcd", "", os.getpid(), start_ticks(os.getpid()), "l", 5, {"peer": 6})])
    state.save()
    again = LabState.load(tmp_path)
    assert again == state
    assert [c.label for c in again.running()] == ["etcd"]
    assert LabState.load(tmp_path / "none") is None


def test_standin_statuses_are_valid_upstream_and_idempotent():
    now = "2026-01-01T00:00:00Z"
    gw = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
          "metadata": {"name": "modelplane", "namespace": "modelplane-system", "generation": 2},
          "spec": {"gatewayClassName": "modelplane", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}
    gw["status"] = standin.gateway_status(gw, "100.64.0.10", 3, now)
    assert gw["status"]["addresses"] == [{"type": "IPAddress", "value": "100.64.0.10"}]
    assert UpstreamSchemas.load().validate(gw) == []
    assert standin.gateway_status(gw, "100.64.0.11", 3, now) is None          # nothing to do
    assert standin.gateway_status(gw, "100.64.0.11", 4, now)["addresses"][0]["value"] == "100.64.0.10"  # kept
    gc = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": {"name": "m"},
          "spec": {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"}}
    gc["status"] = standin.gatewayclass_status(gc, now)
    assert UpstreamSchemas.load().validate(gc) == []
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "n"},
           "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}
    assert standin.service_status(svc, "100.64.0.12") == {"loadBalancer": {"ingress": [{"ip": "100.64.0.12",
                                                                                            "ipMode": "VIP"}]}}
    assert standin.service_status({**svc, "spec": {"type": "ClusterIP"}}, "x") is None
    assert standin.address(1, ["100.64.1.10", "100.64.1.11"]) == "100.64.1.12"


def test_remote_helpers():
    assert remote.deletes(None) and remote.deletes(["*"]) and remote.deletes(["Observe", "Delete"])
    assert not remote.deletes(["Observe", "Create", "Update", "LateInitialize"])  # Namespaces Modelplane keeps
    live = {"metadata": {"name": "x", "managedFields": [{"manager": "m"}], "uid": "u"}, "status": {"a": 1}}
    assert remote.observed_view(live) == {"metadata": {"name": "x", "uid": "u"}, "status": {"a": 1}}
    assert live["metadata"]["managedFields"]  # the input is left alone


def test_a_reset_frees_the_lab_volumes_earlier_claims_held():
    from modelplane.lab.backend import volumes_to_free
    from modelplane.physical.inventory import ClusterInventory, storage

    def pv(name: str, claim: dict | None, lab: bool = True) -> dict:
        labels = {"modelplane.ai/lab": "c"} if lab else {}
        return {"metadata": {"name": name, "labels": labels}, "spec": {"claimRef": claim} if claim else {}}

    ref = {"namespace": "ml-team", "name": "modelcache-x"}
    pvs = [pv("lab-rwx-1", ref), pv("lab-rwx-0", None), pv("lab-rwx-2", ref), pv("someone-elses", ref, lab=False)]
    assert volumes_to_free(pvs) == ["lab-rwx-1", "lab-rwx-2"]
    # The lab's own volumes carry the label the reset looks for.
    built = [o for o in storage(ClusterInventory(name="c", source="Existing", pools=(), cache_class="rwx"))
             if o["kind"] == "PersistentVolume"]
    assert built and volumes_to_free([{**o, "spec": {**o["spec"], "claimRef": ref}} for o in built]) == sorted(
        o["metadata"]["name"] for o in built)
