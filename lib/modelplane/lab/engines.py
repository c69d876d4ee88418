"""The lab's engine supervisor: a mock engine process behind every running engine pod.

kwok runs no containers, so a lab pod's IP would answer nothing. With a data plane
(``lab.netns``), ``lab up`` starts this supervisor (``python -m modelplane.lab.engines STATE_DIR``,
recorded in the state file like every lab process). About twice a second it lists every lab
cluster's pods and, for each pod that is Running with a pod IP and has a container named
``engine``:

- adds the pod IP to the lab's namespace and starts ``modelplane mock-engine --listen <pod IP>
  --pod <pod.json> --cluster <cluster>`` inside it (``ip netns exec``), logging to
  ``<state>/engines/<cluster>/<namespace>.<pod>.log``;
- sets the pod's ``Ready`` and ``ContainersReady`` conditions (and the engine container's
  ``ready``) from what the engine's ``GET /health`` answers, so the real EndpointSlice
  controller lists only pods whose engine says it is ready. kwok starts such a pod not Ready
  (reason ``WaitingForEngine``, ``kube.components.kwok_stages(engine_readiness=True)``) and no
  kwok stage matches a Running pod, so nothing fights the supervisor. A pod whose engine does
  not answer within ``START_GRACE`` seconds, or whose engine exited, is not Ready
  (reason ``EngineNotReady``).

A pod that is gone, deleted or no longer Running loses its process and its address. On SIGTERM
the supervisor stops every engine it started and removes their addresses. A cluster taken down on
purpose (``lab cluster-down``: listed in the state file's ``outages``, read on every pass) loses
all its engines and gets none until it is back; its pods are left as they are (nobody can write
to its API server), as a real cluster's pods keep their last status through an outage.

``engine_port(pod)`` is the port the mock engine serves (``mockengine.from_pod``: vLLM 8000,
SGLang 30000, or the engine's ``--port``): the supervisor probes ``/health`` there. A
multi-node worker (vLLM ``--headless``, SGLang ``--node-rank`` above 0) serves no HTTP, as
the real one: its pod is Ready while its mock engine runs.
"""
from __future__ import annotations

import contextlib
import json
import re
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelplane import clock
from modelplane.kube import ApiError, Client
from modelplane.kube.net import opener
from modelplane.kube.process import Process
from modelplane.lab import netns
from modelplane.lab.state import LabState
from modelplane.mockengine import ConfigError, from_pod

ENGINE = "engine"
INTERVAL = 0.5
START_GRACE = 30.0        # seconds an engine may take to answer /health before its pod reads EngineNotReady
WAITING, NOT_READY, READY = "WaitingForEngine", "EngineNotReady", "EngineReady"
_HTTP = opener()


def engine_container(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return next((c for c in (pod.get("spec") or {}).get("containers") or [] if c.get("name") == ENGINE), None)


def engine_port(pod: Mapping[str, Any]) -> tuple[int, bool]:
    """(port, serves HTTP) of the engine of ``pod``, as the mock engine reads it
    (``mockengine.from_pod``). A container the mock does not understand (its process will exit
    saying why): ``--port`` in its command or args, else 30000 for SGLang and 8000 (vLLM's)."""
    try:
        config = from_pod(dict(pod), ENGINE)
        return config.port, config.serves_http
    except ConfigError:
        pass
    c = engine_container(pod) or {}
    words = [str(w) for w in (c.get("command") or []) + (c.get("args") or [])]
    for i, w in enumerate(words):
        m = re.fullmatch(r"--port=(\d+)", w)
        if m:
            return int(m.group(1)), True
        if w == "--port" and i + 1 < len(words) and words[i + 1].isdigit():
            return int(words[i + 1]), True
    text = " ".join([str(c.get("image") or ""), *words]).lower()
    return (30000 if "sglang" in text else 8000), True


def wants_engine(pod: Mapping[str, Any]) -> bool:
    """Running, with an IP, not being deleted, and with an ``engine`` container."""
    status = pod.get("status") or {}
    return (status.get("phase") == "Running" and bool(status.get("podIP"))
            and not (pod.get("metadata") or {}).get("deletionTimestamp") and engine_container(pod) is not None)


def ready_reason(pod: Mapping[str, Any]) -> tuple[str, str]:
    """(status, reason) of the pod's Ready condition."""
    cond = next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), {})
    return cond.get("status", ""), cond.get("reason", "")


def readiness_patch(pod: Mapping[str, Any], ready: bool, reason: str, message: str, now: str) -> dict:
    """A strategic-merge patch of pod status: Ready, ContainersReady (merged by type), and the
    engine container's ``ready`` (containerStatuses is replaced whole: the others as they are)."""
    status = "True" if ready else "False"
    conds = [{"type": t, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}
             for t in ("ContainersReady", "Ready")]
    containers = [{**c, "ready": ready} if c.get("name") == ENGINE else c
                  for c in (pod.get("status") or {}).get("containerStatuses") or []]
    return {"status": {"conditions": conds, "containerStatuses": containers}}


@dataclass
class Engine:
    cluster: str
    namespace: str
    name: str
    uid: str
    ip: str
    port: int
    http: bool               # False: a multi-node worker (no HTTP): ready while its process runs
    process: Process
    started: float = field(default_factory=time.monotonic)

    @property
    def label(self) -> str:
        return f"{self.cluster}/{self.namespace}/{self.name}"


def _now() -> str:
    return clock.stamp()


def healthy(ip: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with _HTTP.open(f"http://{ip}:{port}/health", timeout=timeout) as rsp:
            return rsp.status == 200
    except OSError:
        return False


class Supervisor:
    """One pass (``sweep``) over every cluster; ``stop_all`` on the way out."""

    def __init__(self, state: LabState, python: str = sys.executable) -> None:
        if state.network is None:
            raise RuntimeError("this lab has no data plane (lab up --no-data-plane): no engines to run")
        self.state = state
        self.ns = state.network.namespace
        self.python = python
        self.engines: dict[tuple[str, str], Engine] = {}     # (cluster, pod uid) -> engine
        self.clients = {name: _client(info.kubeconfig, info.server) for name, info in state.clusters.items()}

    def argv(self, cluster: str, ip: str, pod_file: Path) -> list[str]:
        return netns.command(self.ns, [self.python, "-m", "modelplane.cli", "mock-engine", "--listen", ip,
                                       "--pod", str(pod_file), "--cluster", cluster])

    def sweep(self, down: frozenset[str] = frozenset()) -> None:
        """One pass; the clusters in ``down`` (taken down on purpose) lose their engines."""
        for cluster, client in sorted(self.clients.items()):
            if cluster in down:
                for (c, _), eng in list(self.engines.items()):
                    if c == cluster:
                        self._stop(eng)
                continue
            try:
                pods = client.get("/api/v1/pods").get("items") or []
            except (ApiError, OSError) as err:
                print(f"engines: {cluster}: {err}", file=sys.stderr, flush=True)
                continue
            self._cluster(cluster, client, pods)

    def _cluster(self, cluster: str, client: Client, pods: list[dict]) -> None:
        wanted = {p["metadata"]["uid"]: p for p in pods if wants_engine(p)}
        for (c, uid), eng in list(self.engines.items()):
            if c == cluster and (uid not in wanted or wanted[uid]["status"]["podIP"] != eng.ip):
                self._stop(eng)
        for uid, pod in wanted.items():
            eng = self.engines.get((cluster, uid))
            if eng is None:
                eng = self._start(cluster, pod)
            self._judge(client, eng, pod)

    def _start(self, cluster: str, pod: dict) -> Engine:
        meta = pod["metadata"]
        ip = pod["status"]["podIP"]
        d = Path(self.state.root) / "engines" / cluster
        d.mkdir(parents=True, exist_ok=True)
        stem = f"{meta['namespace']}.{meta['name']}"
        pod_file = d / f"{stem}.json"
        pod_file.write_text(json.dumps(pod, indent=2))
        netns.add(self.ns, ip)
        proc = Process("mock-engine", self.argv(cluster, ip, pod_file), d / f"{stem}.log", grace=5.0)
        eng = Engine(cluster, meta["namespace"], meta["name"], meta["uid"], ip, *engine_port(pod), proc)
        self.engines[(cluster, eng.uid)] = eng
        print(f"engines: started {eng.label} at {ip}:{eng.port} (pid {proc.pid})", flush=True)
        return eng

    def _stop(self, eng: Engine) -> None:
        eng.process.stop()
        self.engines.pop((eng.cluster, eng.uid), None)
        if not any(e.ip == eng.ip for e in self.engines.values()):
            netns.remove(self.ns, eng.ip)
        print(f"engines: stopped {eng.label}", flush=True)

    def _judge(self, client: Client, eng: Engine, pod: dict) -> None:
        have, reason = ready_reason(pod)
        if not eng.http and eng.process.alive():
            want = (True, READY, "a multi-node worker (no HTTP): its engine runs")
        elif eng.http and healthy(eng.ip, eng.port):
            want = (True, READY, "the engine's /health answers 200")
        elif eng.process.alive() and reason == WAITING and time.monotonic() - eng.started < START_GRACE:
            return       # still starting: the pod stays WaitingForEngine
        elif not eng.process.alive():
            want = (False, NOT_READY, f"the engine exited with code {eng.process.proc.returncode} (log: {eng.process.log})")
        else:
            want = (False, NOT_READY, "the engine's /health does not answer 200")
        if (have == "True") == want[0] and reason == want[1]:
            return
        meta = pod["metadata"]
        try:
            client.request("PATCH", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status",
                           readiness_patch(pod, *want, _now()), content_type="application/strategic-merge-patch+json")
        except ApiError as err:
            if err.code != 404:
                raise

    def stop_all(self) -> None:
        """SIGTERM to every engine at once, then wait for each (a lab down is not N times one stop)."""
        for eng in self.engines.values():
            with contextlib.suppress(ProcessLookupError):
                eng.process.proc.send_signal(signal.SIGTERM)
        for eng in list(self.engines.values()):
            self._stop(eng)


def _client(kubeconfig: str, server: str) -> Client:
    pki = Path(kubeconfig).parent / "pki"
    return Client(server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key", timeout=10)


def _down(root: Path) -> frozenset[str]:
    """The clusters taken down on purpose, as the state file says now (it changes while we run)."""
    state = LabState.load(root)      # written whole or not at all (LabState.save renames a full file)
    return frozenset(state.outages) if state else frozenset()


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    state = None
    while state is None or not state.clusters:
        state = LabState.load(root)
        if state is None or not state.clusters:
            time.sleep(INTERVAL)
    sup = Supervisor(state)
    stopping = False

    def on_term(_sig, _frame) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    try:
        while not stopping:
            try:
                sup.sweep(_down(root))
            except (ApiError, OSError, netns.NetnsError) as err:  # a cluster restarting: next pass
                print(f"engines: {err}", file=sys.stderr, flush=True)
            time.sleep(INTERVAL)
    finally:
        sup.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
