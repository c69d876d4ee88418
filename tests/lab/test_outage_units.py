"""A lab cluster taken down, without a lab: the state file's outages, the health checks that must
not mistake them for a crash, the engine supervisor leaving the cluster alone, ``LabPhysical``
turning a refused connection into the unreachable signal, and the reconcile loop reporting it as
provider-kubernetes does (Objects ``Synced=False`` with the connect error, last status kept, the
InferenceCluster NotReady, its endpoints out of routing)."""
from __future__ import annotations

import io
import subprocess
import urllib.error
from pathlib import Path

import pytest
import yaml
from modelplane import paths
from modelplane.cli import lab as lab_cli
from modelplane.kube import pki
from modelplane.lab import backend, engines, outage, remote
from modelplane.lab.state import ClusterInfo, Component, LabState, Outage
from modelplane.physical.simulated import Physical
from modelplane.render import FunctionPool
from modelplane.simulate.loop import load
from modelplane.validate.admission import load_dir

HERE = Path(__file__).resolve().parent
REFUSED = urllib.error.URLError(ConnectionRefusedError(111, "Connection refused"))


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _state(tmp_path: Path) -> LabState:
    dead = _dead_pid()
    state = LabState(directory="d", root=str(tmp_path), components=[
        Component("kube-apiserver", "solo", dead, 1, str(tmp_path / "a.log")),
        Component("traefik", "solo", dead, 1, str(tmp_path / "t.log")),
        Component("kwok", "west", dead, 1, str(tmp_path / "k.log")),
    ])
    state.outages["solo"] = Outage(since=1.0, argv={"solo/kube-apiserver": ["kube-apiserver"], "solo/traefik": ["t"]})
    return state


def test_components_stopped_with_their_cluster_are_not_a_broken_lab(tmp_path):
    state = _state(tmp_path)
    state.save()
    again = LabState.load(tmp_path)
    assert again.outages == state.outages
    assert [c.label for c in again.broken()] == ["west/kwok"]
    assert again.stopped_on_purpose(again.components[0]) and not again.stopped_on_purpose(again.components[2])


def _cluster(tmp_path: Path, name: str) -> ClusterInfo:
    """A cluster entry with the admin client files a ``Remote`` loads (no server behind it)."""
    ca = pki.CA("test-ca")
    ca.pair.write(tmp_path / name / "pki", "ca")
    ca.issue("admin", client=True).write(tmp_path / name / "pki", "admin")
    return ClusterInfo(name=name, server="https://198.18.0.1:6443", kubeconfig=str(tmp_path / name / "kubeconfig"),
                       secret="")


def test_remote_load_refuses_a_crash_but_not_an_outage(tmp_path):
    state = _state(tmp_path)
    state.clusters = {n: _cluster(tmp_path, n) for n in ("solo", "west")}
    state.save()
    with pytest.raises(RuntimeError, match="not running: west/kwok"):
        remote.Remote.load(tmp_path)
    state.components.pop()
    state.save()
    assert remote.Remote.load(tmp_path).state.outages.keys() == {"solo"}


def test_cluster_down_and_up_refuse_what_they_cannot_do(tmp_path):
    state = _state(tmp_path)
    state.clusters = {n: ClusterInfo(n, "https://198.18.0.1:6443", "kubeconfig", "") for n in ("solo", "west")}
    state.save()
    with pytest.raises(outage.OutageError, match="no cluster 'east'.*solo, west"):
        outage.cluster_down("east", tmp_path)
    with pytest.raises(outage.OutageError, match="already down.*cluster-up solo"):
        outage.cluster_down("solo", tmp_path)
    with pytest.raises(outage.OutageError, match="west is not down"):
        outage.cluster_up("west", tmp_path)


def test_the_cli_says_what_it_cannot_do(tmp_path):
    state = _state(tmp_path)
    state.clusters = {n: ClusterInfo(n, "https://198.18.0.1:6443", "kubeconfig", "") for n in ("solo", "west")}
    state.save()
    out, err = io.StringIO(), io.StringIO()
    assert lab_cli.run(["cluster-up", "west", "--state", str(tmp_path)], out, err) == 1
    assert err.getvalue() == ("modelplane lab cluster-up: lab cluster west is not down "
                              "(`modelplane lab cluster-down west` takes it down)\n")


class _Proc:
    def __init__(self):
        self.stopped = False

    def stop(self):
        self.stopped = True


class _NoCalls:
    def get(self, path):
        raise AssertionError(f"a down cluster's API server was called: {path}")


def test_the_supervisor_stops_a_down_clusters_engines_and_does_not_call_it(monkeypatch):
    removed = []
    monkeypatch.setattr(engines.netns, "remove", lambda ns, ip: removed.append(ip))
    sup = engines.Supervisor.__new__(engines.Supervisor)
    sup.ns, sup.clients = "ns", {"solo": _NoCalls()}
    proc = _Proc()
    sup.engines = {("solo", "u"): engines.Engine("solo", "n", "p", "u", "198.19.0.5", 8000, True, proc)}
    sup.sweep(frozenset({"solo"}))
    assert proc.stopped and sup.engines == {} and removed == ["198.19.0.5"]


class _DownRemote:
    """A lab with one cluster whose API server refuses every connection."""

    def __init__(self):
        self.state = LabState(directory="d", root="r")
        self.clients = {"solo": type("C", (), {"server": "https://198.18.0.1:6443"})()}

    def has(self, name):
        return name in self.clients

    def sync(self, name, wanted):
        raise REFUSED


def test_lab_physical_turns_a_refused_connection_into_the_unreachable_signal():
    physical = backend.LabPhysical(_DownRemote(), reset=False)
    key = ("ConfigMap", "n", "c")
    seen = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "n", "name": "c"}}
    known = backend.LabCluster("solo", physical.remote)
    known.live = {key: seen}
    physical.clusters["solo"] = known
    view = physical.sync("solo", None, "", {key: seen}, "now")
    assert view is known
    assert view.unreachable == "lab cluster solo does not answer at https://198.18.0.1:6443: [Errno 111] Connection refused"
    assert view.observed(seen) == seen          # the last observed object is kept, not dropped
    assert view.capacity() == [] and view.pending() == []
    assert view.unreachable in backend.warnings(physical)


class _Cut:
    """simulate's physical model, with clusters whose API server stops answering (as LabPhysical reports it)."""

    def __init__(self):
        self.inner = Physical()
        self.cut: set[str] = set()

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def sync(self, name, *args):
        view = self.inner.sync(name, *args)
        view.unreachable = f"lab cluster {name} does not answer: connection refused" if name in self.cut else ""
        return view


def _fleet(target: Path) -> Path:
    docs = []
    for source in (paths.EXAMPLES / "fleet", HERE / "fleets" / "solo"):
        xrs, _ = load_dir(source)
        docs += [d for d in xrs if d["kind"] == "InferenceClass"
                 or (d["kind"] == "InferenceCluster" and d["metadata"]["name"] in ("solo", "onprem-west"))]
    (target / "clusters.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))
    (target / "models.yaml").write_text((HERE / "fleets" / "failover" / "models.yaml").read_text())
    return target


def _cond(obj, typ):
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == typ), {})


def test_an_unreachable_cluster_goes_not_ready_keeps_its_objects_and_fails_over(tmp_path):
    physical = _Cut()
    with FunctionPool() as pool:
        sim = load(_fleet(tmp_path), pool, physical=physical)
        try:
            assert sim.run().converged
            assert [e["name"] for e in sim.world.xrs[("ModelService", "ml-team", "chat")].obj["status"]["endpoints"]] \
                == ["chat-solo-0-solo", "chat-west-0-onprem-west"]
            solo = ("InferenceCluster", "", "solo")
            service = ("ModelService", "ml-team", "chat")
            placed = sim.world.xrs[("ModelDeployment", "ml-team", "chat-solo")].obj["status"]["placements"]
            assert [p["cluster"] for p in placed] == ["solo"]
            # The engine report's Observe-only Object is never Synced in simulate (nothing writes the
            # ConfigMap it observes: physical.provider); every Object that applies something is.
            before = {k: o for k, o in sim.world.xrs[("ModelReplica", "ml-team", "chat-solo-0-solo")].composed.items()
                      if o["kind"] == "Object" and o["spec"].get("managementPolicies") != ["Observe"]}
            assert before and all(_cond(o, "Synced").get("status") == "True" for o in before.values())

            physical.cut.add("solo")
            sim.advance(1)
            sim.run()
            assert _cond(sim.world.xrs[solo].obj, "Ready")["status"] == "False"
            after = sim.world.xrs[("ModelReplica", "ml-team", "chat-solo-0-solo")].composed
            for name, obj in before.items():
                synced = _cond(after[name], "Synced")
                assert synced["status"] == "False" and synced["message"] == (
                    "cannot connect: lab cluster solo does not answer: connection refused"), name
                assert after[name]["status"]["atProvider"] == obj["status"]["atProvider"], name   # kept
            routed = [e["name"] for e in sim.world.xrs[service].obj["status"]["endpoints"]]
            assert routed == ["chat-west-0-onprem-west"]      # out of routing at once, before failover.after

            sim.advance(11)        # past failover.after (10s): a replacement on the cluster still up
            sim.run()
            placed = sim.world.xrs[("ModelDeployment", "ml-team", "chat-solo")].obj["status"]["placements"]
            assert "onprem-west" in [p["cluster"] for p in placed], placed

            physical.cut.discard("solo")
            sim.advance(1)
            sim.run()
            assert _cond(sim.world.xrs[solo].obj, "Ready")["status"] == "True"
        finally:
            sim.close()
