"""What tests/lab/test_traffic_examples.py reads from the running lab and the composed fleet.

- ``call``: one plain HTTP request from the host (no retry), with who answered
  (the mock engine's ``X-Modelplane-Answered-By`` header; none when the gateway answered itself);
- ``kube`` and ``pods``: a lab API server (a workload cluster's or the control plane's) and the
  pods a label selector picks there;
- ``engine_url``, ``served``, ``set_ready``: a pod's mock engine, on the pod's own address
  (198.19.x inside the lab's network namespace, routed from the host), its count of finished
  completions and its readiness flip (``POST /mock/health``);
- pure readers of the simulated world: which deployments are single-pod, Leader/Worker or
  prefill/decode, what a ModelService's endpoints are, what served names a deployment has.
"""
from __future__ import annotations

import errno
import http.client
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from modelplane.kube import Client
from modelplane.lab.engines import engine_port
from modelplane.lab.state import ClusterInfo
from modelplane.mockengine import from_pod

from tests.lab.traffic_fleet import ANSWERED_BY, who

TIMEOUT = 10.0
# Finished completions, by engine: vLLM labels its counter by finish reason, SGLang keeps one.
SERVED = ("vllm:request_success_total", "sglang:num_requests_total")


@dataclass(frozen=True)
class Answer:
    status: int
    who: dict[str, str]          # empty: no engine answered (the gateway did)
    body: str

    def json(self) -> Any:
        return json.loads(self.body)


def call(method: str, url: str, body: Any = None, timeout: float = TIMEOUT) -> Answer:
    """One request, a fresh connection, no retry."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body)
        conn.request(method, parts.path or "/", data, {"Content-Type": "application/json"} if data else {})
        rsp = conn.getresponse()
        return Answer(rsp.status, who(rsp.getheader(ANSWERED_BY) or ""), rsp.read().decode())
    finally:
        conn.close()


def unanswered(url: str) -> bool:
    """Nothing listens at ``url``'s address and port: the connection is refused (a process-less
    port on a pod address the lab holds), or the address is not there at all (a pod with no
    process: the lab adds a pod's address only for its engine)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=3)
    try:
        conn.connect()
        return False
    except ConnectionRefusedError:
        return True
    except OSError as err:
        if err.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return True
        raise
    finally:
        conn.close()


def chat(model: str) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}


def kube(info: ClusterInfo) -> Client:
    """A client for one lab API server, with the admin credentials the lab wrote beside its kubeconfig."""
    pki = Path(info.kubeconfig).parent / "pki"
    return Client(info.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key", timeout=TIMEOUT)


def selector(labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def pods(client: Client, namespace: str, labels: Mapping[str, str]) -> list[dict]:
    """The pods ``labels`` select, by name."""
    items = client.request("GET", f"/api/v1/namespaces/{namespace}/pods", query={"labelSelector": selector(labels)})["items"]
    return sorted(items, key=lambda p: p["metadata"]["name"])


def condition(conditions: Iterable[Mapping[str, Any]] | None, kind: str) -> dict:
    return dict(next((c for c in conditions or [] if c.get("type") == kind), {}))


def running_and_ready(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and condition(status.get("conditions"), "Ready").get("status") == "True"


def engine_url(pod: Mapping[str, Any]) -> str:
    """``http://<pod IP>:<engine port>``: where the lab's mock engine for ``pod`` listens."""
    return f"http://{pod['status']['podIP']}:{engine_port(pod)[0]}"


def served(url: str) -> float:
    """Completions the engine at ``url`` finished (its own Prometheus counter)."""
    text = call("GET", url + "/metrics").body
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.split("{", 1)[0].split(" ", 1)[0] in SERVED)


def set_ready(url: str, ready: bool) -> None:
    """Flip the engine's ``/health`` (the mock engine's ``POST /mock/health``)."""
    got = call("POST", url + "/mock/health", {"ready": ready})
    assert got.status == 200, (url, got)


def wait_for(what: str, check: Callable[[], bool], timeout: float = 30.0) -> float:
    """Seconds until ``check()`` holds; fails naming ``what`` after ``timeout``."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, f"{what}: not within {timeout:.0f}s"
        time.sleep(0.1)
    return time.monotonic() - start


# ----- the simulated world (pure) ----------------------------------------------------------
def xrs(world, kind: str) -> list[tuple[str, str, dict]]:
    """(namespace, name, object) of every XR of ``kind``, in key order."""
    return [(k[1], k[2], s.obj) for k, s in sorted(world.xrs.items()) if k[0] == kind]


def single_pod(spec: Mapping[str, Any]) -> bool:
    """One engine, one copy, one Standalone member: each replica is one pod behind a Service."""
    engines = spec.get("engines") or []
    return (len(engines) == 1 and (spec.get("serving") or {}).get("mode") != "PrefillDecode"
            and int(engines[0].get("copies", 1)) == 1
            and [m.get("role") for m in engines[0].get("members") or []] == ["Standalone"])


def leader_worker(spec: Mapping[str, Any]) -> bool:
    return any(m.get("role") == "Leader" for e in spec.get("engines") or [] for m in e.get("members") or [])


def prefill_decode(spec: Mapping[str, Any]) -> bool:
    return (spec.get("serving") or {}).get("mode") == "PrefillDecode"


def served_names(spec: Mapping[str, Any]) -> set[str]:
    """The model names every engine of a deployment serves, read from the user's containers as the
    engine would read them (``mockengine.from_pod``); a multi-node worker serves none."""
    names: set[str] | None = None
    for engine in spec.get("engines") or []:
        for member in engine.get("members") or []:
            config = from_pod({"spec": member["template"]["spec"]}, "engine")
            if config.serves_http:
                names = set(config.served_names) if names is None else names & set(config.served_names)
    return names or set()


def placements(world) -> dict[str, tuple[str, str, dict]]:
    """Replica name -> (namespace, deployment, placement) of every placed replica."""
    out = {}
    for ns, name, obj in xrs(world, "ModelDeployment"):
        for p in (obj.get("status") or {}).get("placements") or []:
            out[p["name"]] = (ns, name, p)
    return out


def replica_refs(world, ns: str, replica: str) -> list[dict]:
    """The backendRefs the replica's cluster route carries (its ModelEndpoint's ``spec.replica``)."""
    endpoint = world.xrs[("ModelEndpoint", ns, replica)].obj
    return list(((endpoint.get("spec") or {}).get("replica") or {}).get("backendRefs") or [])


def route_conditions(route: Mapping[str, Any]) -> dict[str, dict]:
    """Condition type -> condition, from the route's only parent status (the data plane's verdict)."""
    parents = (route.get("status") or {}).get("parents") or []
    assert len(parents) == 1, f"route {route['metadata']['name']}: parents in status: {parents}"
    return {c["type"]: c for c in parents[0].get("conditions") or []}
