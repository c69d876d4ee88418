"""``simulate --lab``: the control plane's routing objects on the lab's control-plane API server.

A ModelService's route, the InferenceGateway's Gateway and every in-fleet ModelEndpoint's
Service and EndpointSlice are composed on the control plane, not on a workload cluster. With a
data plane (``lab up`` as root) the lab runs a control-plane API server with its own Traefik
(``LabState.control_plane``), so these objects are applied there and their status is read back
from it: the Gateway's address and conditions come from Traefik, and a request really travels
control-plane gateway -> cluster gateway -> engine.

``status`` is what ``simulate.sync`` asks instead of making a status up; it waits briefly for
Traefik (a Gateway Programmed with an address, a route Accepted at its generation), as the
reconcile loop would see it a moment later. ``reset`` deletes what an earlier run left.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from modelplane.kube import ApiError
from modelplane.lab.remote import FIELD_MANAGER, RetryingClient
from modelplane.lab.state import ClusterInfo
from modelplane.labels import MANAGED_BY

GATEWAY_API = "gateway.networking.k8s.io/v1"
# The kinds the lab's control plane holds: what routing needs, nothing Crossplane-only.
KINDS = frozenset({(GATEWAY_API, "Gateway"), (GATEWAY_API, "HTTPRoute"), ("v1", "Service"),
                   ("discovery.k8s.io/v1", "EndpointSlice")})
WAIT = 15.0          # Traefik programs a Gateway in ~1.6 s and a route in well under a second
POLL = 0.1


class LabControlPlane:
    def __init__(self, info: ClusterInfo, wait: float = WAIT) -> None:
        pki = Path(info.kubeconfig).parent / "pki"
        self.client = RetryingClient(info.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")
        self.gateway = info.gateway
        self.wait = wait
        self._namespaces: set[str] = set()

    @staticmethod
    def holds(obj: Mapping[str, Any]) -> bool:
        return (obj.get("apiVersion"), obj.get("kind")) in KINDS

    def status(self, obj: Mapping[str, Any]) -> dict:
        """Apply ``obj`` and return the status its controllers report on the lab's control plane."""
        body = copy.deepcopy(dict(obj))
        body.pop("status", None)
        ns = (body.get("metadata") or {}).get("namespace")
        if ns:
            self._namespace(ns)
        try:
            live = self.client.apply(body, field_manager=FIELD_MANAGER, force=True)
        except ApiError as err:
            raise RuntimeError(f"the lab's control plane refused {obj.get('kind')} "
                               f"{ns + '/' if ns else ''}{(body.get('metadata') or {}).get('name')}: {err}") from None
        deadline = time.monotonic() + self.wait
        while not _settled(live) and time.monotonic() < deadline:
            time.sleep(POLL)
            live = self.client.get(self.client.path_of(body))
        return dict(live.get("status") or {})

    def reset(self) -> None:
        """Delete every object of ``KINDS`` a function composed in an earlier run."""
        for api, kind in sorted(KINDS):
            res = self.client.resource(api, kind)
            items = self.client.get(f"{res.path()}?labelSelector={MANAGED_BY}")
            for item in (items or {}).get("items") or []:
                try:
                    self.client.delete({**item, "apiVersion": api, "kind": kind})
                except ApiError:
                    pass

    def _namespace(self, name: str) -> None:
        if name in self._namespaces:
            return
        try:
            self.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        except ApiError as err:
            if err.code != 409:
                raise
        self._namespaces.add(name)


def _settled(live: Mapping[str, Any]) -> bool:
    """Whether Traefik has had its say on this object (kinds without a controller: at once)."""
    kind = live.get("kind")
    gen = (live.get("metadata") or {}).get("generation")
    status = live.get("status") or {}
    if kind == "Gateway":
        return bool(status.get("addresses")) and any(
            c.get("type") == "Programmed" and c.get("observedGeneration") == gen
            for c in status.get("conditions") or [])
    if kind == "HTTPRoute":
        return any(any(c.get("type") == "Accepted" and c.get("observedGeneration") == gen
                       for c in p.get("conditions") or []) for p in status.get("parents") or [])
    return True
