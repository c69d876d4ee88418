"""The lab's stand-in for what a cloud and Envoy Gateway do on a workload cluster.

A lab cluster has no load balancers and no gateway data plane, so nothing
would ever give a Gateway an address, accept a GatewayClass, or give a
``LoadBalancer`` Service an ingress IP. This stand-in does exactly that and
nothing more, labelled as such in every condition message:

- GatewayClass: ``Accepted``;
- Gateway: an address, ``Accepted`` and ``Programmed``, and per listener its
  supported kinds, attached routes and conditions (the Gateway API shape);
- Service of type LoadBalancer: ``status.loadBalancer.ingress[0].ip``.

Addresses come from 100.64.<cluster index>.0/24 (shared address space, never
routed here): no traffic can reach them.

With the lab's data plane, Traefik serves the GatewayClass ``modelplane-lab``
(``lab.dataplane``) and writes the status of it and of its Gateways itself: the
stand-in leaves both alone and keeps answering every other class (Envoy
Gateway's, which Modelplane composes) and LoadBalancer Services.

Run by ``lab up`` as ``python -m modelplane.lab.standin STATE_DIR``; it polls
every cluster of the state file once a second. The status builders are pure.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from modelplane import clock
from modelplane.kube import ApiError, Client
from modelplane.lab.state import LabState

GATEWAY_API = "gateway.networking.k8s.io/v1"
SERVED_ELSEWHERE = frozenset({"modelplane-lab"})   # GatewayClasses whose controller runs (lab.dataplane)
MESSAGE = "modelplane lab stand-in (no data plane)"
INTERVAL = 1.0


def _now() -> str:
    return clock.stamp()


def _cond(kind: str, reason: str, generation: int, now: str) -> dict:
    return {"type": kind, "status": "True", "reason": reason, "message": MESSAGE,
            "observedGeneration": generation, "lastTransitionTime": now}


def _is_true(status: Mapping[str, Any] | None, kind: str, generation: int | None = None) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True"
               and (generation is None or c.get("observedGeneration") == generation)
               for c in (status or {}).get("conditions") or [])


def address(cluster_index: int, taken: Sequence[str]) -> str:
    """The lowest free 100.64.<cluster_index>.x (x from 10)."""
    for host in range(10, 255):
        ip = f"100.64.{cluster_index % 256}.{host}"
        if ip not in taken:
            return ip
    raise RuntimeError(f"lab stand-in: no free address left in 100.64.{cluster_index}.0/24")


def gatewayclass_status(gc: Mapping[str, Any], now: str) -> dict | None:
    """The status to write, or None when it is already accepted at this generation."""
    gen = (gc.get("metadata") or {}).get("generation", 1)
    if _is_true(gc.get("status"), "Accepted", gen):
        return None
    return {"conditions": [_cond("Accepted", "Accepted", gen, now)]}


def gateway_status(gw: Mapping[str, Any], ip: str, routes: int, now: str) -> dict | None:
    meta = gw.get("metadata") or {}
    gen = meta.get("generation", 1)
    status = gw.get("status") or {}
    have = [a.get("value") for a in status.get("addresses") or []]
    if _is_true(status, "Programmed", gen) and have and all(
            ls.get("attachedRoutes") == routes for ls in status.get("listeners") or []):
        return None
    ip = have[0] if have else ip
    listeners = [{
        "name": ls.get("name", ""),
        "supportedKinds": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}],
        "attachedRoutes": routes,
        "conditions": [_cond("Accepted", "Accepted", gen, now), _cond("Programmed", "Programmed", gen, now),
                       _cond("ResolvedRefs", "ResolvedRefs", gen, now)],
    } for ls in (gw.get("spec") or {}).get("listeners") or []]
    return {
        "addresses": [{"type": "IPAddress", "value": ip}],
        "conditions": [_cond("Accepted", "Accepted", gen, now), _cond("Programmed", "Programmed", gen, now)],
        "listeners": listeners,
    }


def service_status(svc: Mapping[str, Any], ip: str) -> dict | None:
    if (svc.get("spec") or {}).get("type") != "LoadBalancer":
        return None
    if ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress"):
        return None
    return {"loadBalancer": {"ingress": [{"ip": ip, "ipMode": "VIP"}]}}


def _routes_to(routes: list[dict], gw: Mapping[str, Any]) -> int:
    meta = gw.get("metadata") or {}
    n = 0
    for r in routes:
        rns = (r.get("metadata") or {}).get("namespace")
        for ref in (r.get("spec") or {}).get("parentRefs") or []:
            if ref.get("name") == meta.get("name") and (ref.get("namespace") or rns) == meta.get("namespace"):
                n += 1
                break
    return n


def _taken(gateways: list[dict], services: list[dict]) -> list[str]:
    out = [a.get("value") for g in gateways for a in (g.get("status") or {}).get("addresses") or []]
    out += [i.get("ip") for s in services for i in ((s.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []]
    return [a for a in out if a]


def _items(client: Client, path: str) -> list[dict]:
    try:
        return client.get(path).get("items") or []
    except ApiError as err:
        if err.code == 404:  # a CRD not installed (yet)
            return []
        raise


def _patch_status(client: Client, obj: dict, status: dict, api_version: str, kind: str) -> None:
    body = {"apiVersion": api_version, "kind": kind, "metadata": obj["metadata"], "status": status}
    client.request("PATCH", client.path_of(body, "status"), {"status": status},
                   content_type="application/merge-patch+json")


def sweep(client: Client, cluster_index: int) -> int:
    """One pass over a cluster; returns how many statuses it wrote."""
    now = _now()
    written = 0
    for gc in _items(client, f"/apis/{GATEWAY_API}/gatewayclasses"):
        if gc["metadata"]["name"] in SERVED_ELSEWHERE:
            continue
        st = gatewayclass_status(gc, now)
        if st:
            _patch_status(client, gc, st, GATEWAY_API, "GatewayClass")
            written += 1
    gateways = _items(client, f"/apis/{GATEWAY_API}/gateways")
    services = _items(client, "/api/v1/services")
    routes = _items(client, f"/apis/{GATEWAY_API}/httproutes") if gateways else []
    taken = _taken(gateways, services)
    for gw in gateways:
        if (gw.get("spec") or {}).get("gatewayClassName") in SERVED_ELSEWHERE:
            continue
        ip = address(cluster_index, taken)
        st = gateway_status(gw, ip, _routes_to(routes, gw), now)
        if st:
            _patch_status(client, gw, st, GATEWAY_API, "Gateway")
            taken.append(st["addresses"][0]["value"])
            written += 1
    for svc in services:
        ip = address(cluster_index, taken)
        st = service_status(svc, ip)
        if st:
            _patch_status(client, svc, st, "v1", "Service")
            taken.append(ip)
            written += 1
    return written


def _clients(state: LabState) -> list[tuple[int, Client]]:
    out = []
    for i, name in enumerate(sorted(state.clusters)):
        pki = Path(state.clusters[name].kubeconfig).parent / "pki"
        out.append((i, Client(state.clusters[name].server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key",
                              timeout=10)))
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    clients: list[tuple[int, Client]] = []
    while True:
        if not clients:
            state = LabState.load(root)
            clients = _clients(state) if state else []
        for index, client in clients:
            try:
                sweep(client, index)
            except (ApiError, OSError) as err:  # a cluster restarting: try again next pass
                print(f"stand-in: cluster {index}: {err}", file=sys.stderr, flush=True)
        time.sleep(INTERVAL)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
