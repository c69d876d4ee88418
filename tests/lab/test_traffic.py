"""Requests that really travel: simulate --lab composes the fleet, and a client on the host sends
OpenAI requests through the composed routes to the lab's mock engines, over Traefik.

control-plane gateway (the ModelService route) -> cluster gateway (the service's route there)
-> engine pod; and each replica's own URL on its cluster gateway. The lab has a data plane
only as root (CI); these tests fail there rather than skip.
"""
from __future__ import annotations

import collections
import http.client
import json
from urllib.parse import urlsplit

import pytest
from modelplane.lab.backend import LabPhysical
from modelplane.lab.remote import Remote
from modelplane.simulate.loop import simulate

from tests.lab import long_stream as LS
from tests.lab.lab_fleet import need_data_plane
from tests.lab.traffic_fleet import ANSWERED_BY, CLUSTERS, who
from tests.lab.traffic_fleet import fleet as _fleet

pytestmark = [pytest.mark.slow, pytest.mark.lab]

@pytest.fixture(scope="module")
def traffic(lab, tmp_path_factory):
    need_data_plane(lab)
    directory = _fleet(lab, tmp_path_factory.mktemp("traffic"))
    world, outcome, sim = simulate(directory, physical=LabPhysical(Remote(lab)))
    assert outcome.converged, outcome.still_changing
    return world, sim


def _post(url: str, body: dict, timeout: float = 10.0) -> tuple[int, dict, str]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        conn.request("POST", parts.path, json.dumps(body), {"Content-Type": "application/json"})
        rsp = conn.getresponse()
        raw = rsp.read().decode()
        return rsp.status, who(rsp.getheader(ANSWERED_BY) or ""), raw
    finally:
        conn.close()


def _status(world, kind: str, ns: str, name: str) -> dict:
    return world.xrs[(kind, ns, name)].obj.get("status") or {}


def test_every_cluster_and_the_control_plane_serve_the_lab_gateway_class(traffic):
    world, _ = traffic
    for name in CLUSTERS:
        state = world.xrs[("InferenceCluster", "", name)]
        assert state.obj["spec"]["gateway"]["className"] == "modelplane-lab"
        assert _status(world, "InferenceCluster", "", name)["gateway"]["address"].startswith("198.1")
    assert world.xrs[("InferenceGateway", "", "default")].obj["spec"]["gatewayClassName"] == "modelplane-lab"
    assert _status(world, "InferenceGateway", "", "default")["address"].startswith("198.1")


def test_each_replica_answers_on_its_own_url_with_the_v1_path(traffic):
    world, _ = traffic
    seen = 0
    for dep in ("chat-a", "chat-b"):
        for p in _status(world, "ModelDeployment", "ml-team", dep)["placements"]:
            gw = _status(world, "InferenceCluster", "", p["cluster"])["gateway"]["address"]
            url = f"http://{gw}/ml-team/{p['name']}/v1/chat/completions"
            code, who, raw = _post(url, {"model": "chat", "messages": [{"role": "user", "content": "hi"}]})
            assert code == 200, (url, raw)
            assert (who["deployment"], who["replica"], who["cluster"]) == (dep, str(p["index"]), p["cluster"])
            body = json.loads(raw)
            assert body["model"] == "chat" and body["modelplane"]["path"] == "/v1/chat/completions"
            seen += 1
    assert seen == 3


def test_the_service_splits_80_20_over_two_deployments_through_both_hops(traffic):
    world, _ = traffic
    url = _status(world, "ModelService", "ml-team", "chat")["address"] + "/v1/chat/completions"
    counts: collections.Counter[str] = collections.Counter()
    paths = set()
    for _ in range(1000):
        code, who, raw = _post(url, {"model": "chat", "messages": [{"role": "user", "content": "hi"}]})
        assert code == 200, raw
        counts[who["deployment"]] += 1
        paths.add(json.loads(raw)["modelplane"]["path"])
    assert paths == {"/v1/chat/completions"}      # the engine sees /v1/... whatever prefix matched
    share = counts["chat-a"] / 1000
    assert 0.75 <= share <= 0.85, counts


def test_a_streaming_answer_arrives_through_the_service(traffic):
    world, _ = traffic
    url = _status(world, "ModelService", "ml-team", "chat")["address"] + "/v1/completions"
    code, who, raw = _post(url, {"model": "chat", "prompt": "hi", "stream": True, "max_tokens": 8})
    assert code == 200 and who["deployment"] in ("chat-a", "chat-b")
    events = [line[len("data: "):] for line in raw.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]" and len(events) >= 2
    assert all(json.loads(e)["model"] == "chat" for e in events[:-1])


def test_a_wrong_path_or_model_fails_loudly(traffic):
    world, _ = traffic
    base = _status(world, "ModelService", "ml-team", "chat")["address"]
    code, _, _ = _post(base + "/v1/chat/completions", {"model": "not-served", "messages": []})
    assert code in (400, 404)
    code, _, _ = _post(base + "/nope/v1/chat/completions", {"model": "chat", "messages": []})
    assert code == 404


# ----- issue 47, item 6: a long answer is not cut (tests/lab/long_stream.py) ---------------------------
def test_every_route_the_lab_holds_carries_the_request_timeout(lab, traffic):
    world, _ = traffic
    clusters: dict[str, list[str]] = {}
    for dep in ("chat-a", "chat-b"):
        for p in _status(world, "ModelDeployment", "ml-team", dep)["placements"]:
            clusters.setdefault(p["cluster"], []).append(p["name"])
    held = LS.held_routes(lab, "ml-team", "chat", clusters)
    assert len(held) == 1 + len(clusters) + 3       # hop 1, each hop 2, each replica's own route
    for where, route in held.items():
        assert [r.get("timeouts") for r in route["spec"]["rules"]] == [{"request": "1h"}], where


def test_a_stream_longer_than_20s_arrives_whole_and_envoy_cuts_it_only_without_the_timeout(lab, traffic, tmp_path):
    world, _ = traffic
    address = _status(world, "ModelService", "ml-team", "chat")["address"]
    judged = LS.judge(lab, address, "ml-team", "chat", "chat", tmp_path / "envoy")
    for name in ("traefik", "envoy-composed"):
        s = judged.streams[name]
        assert s.complete and s.tokens == LS.TOKENS, (name, s)
        assert s.seconds >= LS.TOKENS * LS.TOKEN_DELAY > 20     # a lower bound: the pacing held
    # Envoy's own count of route timeouts: none on the route as composed, one without its timeouts.
    assert judged.envoy_timeouts == {"composed": 0, "before": 1}
    cut = judged.streams["envoy-before"]
    assert cut.status == 200 and not cut.complete and cut.tokens < LS.TOKENS, cut   # some tokens, then the cut
