"""The lab's data plane: requests really travel, from the host to mock engines on pod IPs, through Traefik.

One Deployment of two vLLM-shaped engine pods on the shared lab's ``solo`` cluster, a Service,
and a Gateway of class ``modelplane-lab`` with an HTTPRoute that strips ``/ns/x``; then the
same engines behind the control-plane API server's Traefik, through a selector-less Service
and a hand-written EndpointSlice (how the control plane reaches workload clusters). ``lab down``
leaving nothing behind is test_lifecycle's.
"""
from __future__ import annotations

import ipaddress
import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from modelplane.kube import ApiError, Client
from modelplane.kube.net import opener
from modelplane.lab.state import ClusterInfo

from tests.lab.lab_fleet import need_data_plane

pytestmark = [pytest.mark.slow, pytest.mark.lab]

CLUSTER = "solo"
NS = "dataplane-test"
HEADER = "X-Modelplane-Answered-By"
GW_API = "gateway.networking.k8s.io/v1"
HTTP = opener()
ENGINE = {"name": "engine", "image": "vllm/vllm-openai:v0.23.0",
          "args": ["--model=Qwen/Qwen3-8B", "--served-model-name=qwen"]}
CHAT = {"model": "qwen", "messages": [{"role": "user", "content": "hello"}]}


def _client(info: ClusterInfo) -> Client:
    pki = Path(info.kubeconfig).parent / "pki"
    return Client(info.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")


def _http(method: str, url: str, body: dict | None = None) -> tuple[int, dict, dict]:
    """(status, JSON body or {}, headers) of one request; an error status is returned, not raised."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with HTTP.open(req, timeout=5) as rsp:
            raw, status, headers = rsp.read(), rsp.status, dict(rsp.headers)
    except urllib.error.HTTPError as err:
        raw, status, headers = err.read(), err.code, dict(err.headers)
    try:
        return status, json.loads(raw or b"{}"), headers
    except ValueError:
        return status, {"text": raw.decode(errors="replace")}, headers


def _who(headers: dict) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in (headers.get(HEADER) or "").split(",") if "=" in kv)


def _wait(what: str, probe, timeout: float = 45.0):
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _ready(pod: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])


def _gateway(name: str, ns: str) -> dict:
    return {"apiVersion": GW_API, "kind": "Gateway", "metadata": {"name": name, "namespace": ns},
            "spec": {"gatewayClassName": "modelplane-lab",
                     "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}


def _route(ns: str, gateway: str, service: str) -> dict:
    return {"apiVersion": GW_API, "kind": "HTTPRoute", "metadata": {"name": "x", "namespace": ns},
            "spec": {"parentRefs": [{"name": gateway}],
                     "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/ns/x/"}}],
                                "filters": [{"type": "URLRewrite", "urlRewrite": {
                                    "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}],
                                "backendRefs": [{"name": service, "port": 8000}]}]}}


def _programmed(client: Client, ns: str, name: str) -> dict | None:
    gw = client.get(f"/apis/{GW_API}/namespaces/{ns}/gateways/{name}")
    ok = any(c["type"] == "Programmed" and c["status"] == "True" for c in (gw.get("status") or {}).get("conditions") or [])
    return gw if ok and (gw["status"].get("addresses") or []) else None


@pytest.fixture(scope="module")
def served(lab):
    """Two engine pods behind a Service and a Gateway on the solo cluster: (client, pods, gateway ip)."""
    need_data_plane(lab)
    info = lab.clusters[CLUSTER]
    client = _client(info)
    objs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "namespace": NS},
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}},
                  "template": {"metadata": {"labels": {"app": "x"}},
                               "spec": {"tolerations": [{"operator": "Exists"}], "containers": [ENGINE]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x", "namespace": NS},
         "spec": {"selector": {"app": "x"}, "ports": [{"name": "http", "port": 8000, "targetPort": 8000}]}},
        _gateway("gw", NS),
        _route(NS, "gw", "x"),
    ]
    for obj in objs:
        client.apply(obj)
    start = time.monotonic()

    def two_ready():
        pods = client.get(f"/api/v1/namespaces/{NS}/pods")["items"]
        return pods if len(pods) == 2 and all(_ready(p) for p in pods) else None

    pods = _wait("two Ready engine pods", two_ready)
    print(f"\ntwo engine pods Ready {time.monotonic() - start:.1f} s after the apply")
    gw = _wait("the Gateway programmed by Traefik", lambda: _programmed(client, NS, "gw"))
    address = gw["status"]["addresses"][0]["value"]
    _wait("the route's first answer", lambda: _http("POST", f"http://{address}/ns/x/v1/chat/completions",
                                                    CHAT)[0] == 200)
    print(f"routed through Traefik {time.monotonic() - start:.1f} s after the apply")
    yield client, pods, address
    client.request("DELETE", f"/api/v1/namespaces/{NS}")


def test_an_engine_pod_answers_on_its_pod_ip(lab, served):
    pods = served[1]
    pods_range = ipaddress.ip_network(lab.clusters[CLUSTER].pods)
    for pod in pods:
        ip = pod["status"]["podIP"]
        assert ipaddress.ip_address(ip) in pods_range
        status, body, headers = _http("GET", f"http://{ip}:8000/v1/models")
        assert status == 200
        assert [m["id"] for m in body["data"]] == ["qwen"]
        who = _who(headers)
        assert (who["cluster"], who["namespace"], who["pod"]) == (CLUSTER, NS, pod["metadata"]["name"])


def test_the_gateway_routes_through_traefik(lab, served):
    _, pods, address = served
    assert address == lab.clusters[CLUSTER].gateway
    answered = set()
    for _ in range(10):
        status, body, headers = _http("POST", f"http://{address}/ns/x/v1/chat/completions", CHAT)
        assert status == 200, body
        assert body["choices"][0]["message"]["role"] == "assistant"
        answered.add(_who(headers)["pod"])
    assert answered <= {p["metadata"]["name"] for p in pods}
    assert _http("GET", f"http://{address}/elsewhere")[0] == 404


def test_an_unready_engine_leaves_the_route(served):
    client, pods, address = served
    sick, well = pods[0], pods[1]
    sick_name, well_name = sick["metadata"]["name"], well["metadata"]["name"]
    assert _http("POST", f"http://{sick['status']['podIP']}:8000/mock/health", {"ready": False})[0] == 200
    try:
        _wait("the pod NotReady", lambda: not _ready(client.get(f"/api/v1/namespaces/{NS}/pods/{sick_name}")))

        def dropped():
            slices = client.get(f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices")["items"]
            eps = [e for s in slices for e in s.get("endpoints") or []]
            state = {e["targetRef"]["name"]: e["conditions"].get("ready") for e in eps}
            return state.get(sick_name) is False and state.get(well_name) is True

        _wait("the EndpointSlice to mark it not ready", dropped)

        def only_well():   # Traefik applies the change: five answers in a row from the ready pod
            return all(_who(_http("POST", f"http://{address}/ns/x/v1/chat/completions", CHAT)[2]).get("pod")
                       == well_name for _ in range(5))

        _wait("Traefik to stop sending to it", only_well, timeout=20)
        for _ in range(20):
            status, body, headers = _http("POST", f"http://{address}/ns/x/v1/chat/completions", CHAT)
            assert (status, _who(headers).get("pod")) == (200, well_name), body
    finally:
        _http("POST", f"http://{sick['status']['podIP']}:8000/mock/health", {"ready": True})
    _wait("the pod Ready again", lambda: _ready(client.get(f"/api/v1/namespaces/{NS}/pods/{sick_name}")))


def test_the_control_plane_reaches_engines_through_its_own_gateway(lab, served):
    pods = served[1]
    cp = lab.control_plane
    assert cp is not None and cp.gateway
    client = _client(cp)
    ns = "cp-test"
    ips = [p["status"]["podIP"] for p in pods]
    objs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "remote", "namespace": ns},
         "spec": {"ports": [{"name": "http", "port": 8000, "targetPort": 8000}]}},
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "remote-solo", "namespace": ns,
                      "labels": {"kubernetes.io/service-name": "remote",
                                 "endpointslice.kubernetes.io/managed-by": "modelplane.ai"}},
         "addressType": "IPv4", "ports": [{"name": "http", "port": 8000, "protocol": "TCP"}],
         "endpoints": [{"addresses": [ip], "conditions": {"ready": True}} for ip in ips]},
        _gateway("cp", ns),
        _route(ns, "cp", "remote"),
    ]
    for obj in objs:
        client.apply(obj)
    try:
        gw = _wait("the control-plane Gateway programmed", lambda: _programmed(client, ns, "cp"))
        assert gw["status"]["addresses"][0]["value"] == cp.gateway
        def answer():
            status, _body, headers = _http("POST", f"http://{cp.gateway}/ns/x/v1/chat/completions", CHAT)
            return status == 200 and headers

        headers = _wait("an answer through the control-plane gateway", answer)
        assert _who(headers)["cluster"] == CLUSTER
        assert _who(headers)["pod"] in {p["metadata"]["name"] for p in pods}
    finally:
        for obj in reversed(objs[1:]):
            try:
                client.delete(obj)
            except ApiError:
                pass
