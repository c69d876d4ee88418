"""lab up / status / down on a one-cluster fleet: ready, reported, crash shown, nothing left behind
(with a data plane: no namespace, veth or process in it)."""
from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest
import yaml
from modelplane.cli import lab as cli
from modelplane.kube import Client
from modelplane.lab import netns, runner
from modelplane.lab.state import LabState

from tests.lab.lab_fleet import SOLO, data_plane, need_tools

pytestmark = [pytest.mark.slow, pytest.mark.lab]


def _client(state: LabState, cluster: str) -> Client:
    info = state.clusters[cluster]
    pki = Path(info.kubeconfig).parent / "pki"
    return Client(info.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")


def test_up_status_down(tmp_path, capsys, monkeypatch):
    need_tools()
    if not data_plane():
        monkeypatch.setenv(runner.NO_DATA_PLANE_ENV, "0")
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    shutil.copy(SOLO / "cluster.yaml", fleet / "cluster.yaml")
    root = tmp_path / "state"
    assert cli.run(["up", str(fleet), "--state", str(root)]) == 0
    state = LabState.load(root)
    inside: list[int] = []
    try:
        assert set(state.clusters) == {"solo"}
        labels = [c.label for c in state.components]
        if data_plane():
            # The control plane starts beside the cluster: its two sit anywhere before the stand-in.
            cp = ["control-plane/kube-apiserver", "control-plane/traefik"]
            assert sorted(labels[:9]) == sorted(["etcd", "solo/kube-apiserver", "solo/kube-controller-manager",
                                                 "solo/kube-scheduler", "solo/kwok", "solo/lws", "solo/traefik", *cp])
            assert labels[9:] == ["standin", "engines"]
            assert labels.index(cp[0]) < labels.index(cp[1])
            inside = netns.pids(state.network.namespace)
            assert len(inside) == 2   # the two Traefiks: no engine pod yet
        else:
            assert labels == ["etcd", "solo/kube-apiserver", "solo/kube-controller-manager", "solo/kube-scheduler",
                              "solo/kwok", "solo/lws", "standin"]
        assert all(c.alive() for c in state.components)
        print(f"\nlab of 1 cluster ready in {state.ready_seconds} s")

        client = _client(state, "solo")
        (node,) = client.get("/api/v1/nodes")["items"]
        assert node["metadata"]["labels"]["modelplane.ai/pool"] == "gpu"
        assert any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"])
        (rs,) = client.get("/apis/resource.k8s.io/v1/resourceslices")["items"]
        assert (rs["spec"]["nodeName"], len(rs["spec"]["devices"])) == (node["metadata"]["name"], 8)
        kinds = {r["kind"] for r in client.get("/apis/leaderworkerset.x-k8s.io/v1")["resources"]}
        assert "LeaderWorkerSet" in kinds

        secret = yaml.safe_load(Path(state.clusters["solo"].secret).read_text())
        assert (secret["metadata"]["namespace"], secret["metadata"]["name"]) == ("modelplane-system", "solo-kubeconfig")

        # A second lab in the same folder is refused while this one runs.
        assert cli.run(["up", str(fleet), "--state", str(root)]) == 1
        assert "already running" in capsys.readouterr().err

        capsys.readouterr()
        assert cli.run(["status", "--state", str(root)]) == 0
        out = capsys.readouterr().out
        assert "solo/kube-scheduler" in out and " NO " not in out

        # A crashed component is reported with its log, not hidden.
        kwok = state.find("kwok", "solo")
        os.kill(kwok.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while kwok.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not kwok.alive()
        assert cli.run(["status", "--state", str(root)]) == 1
        captured = capsys.readouterr()
        assert "solo/kwok" in captured.err and "is not running" in captured.err
    finally:
        stopped = runner.down(root)
    assert "solo/kube-apiserver" in stopped and "etcd" in stopped
    for comp in state.components:
        assert not comp.alive(), comp.label
    assert LabState.load(root) is None
    assert netns.gone(root)
    assert [pid for pid in inside if Path(f"/proc/{pid}").exists()] == []
    assert runner.down(root) == []
