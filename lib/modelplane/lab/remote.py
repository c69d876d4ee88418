"""The lab's clusters as provider-kubernetes sees them: apply, read back, delete, settle.

``simulate --lab`` hands every composed remote object (the manifest of a
provider-kubernetes ``Object``) to ``Remote.sync`` for the cluster it targets:
the manifest is server-side applied to that lab cluster, the live object
(status included) is read back from the real server, and manifests no longer
composed are deleted when their Object's management policies allow it, as the
provider does. ``settle`` waits until the real controllers stop moving: every
workload observed at its generation, every pod either running (with a data plane:
its engine judged ready or not), finished, or reported unschedulable by
kube-scheduler, and nothing changed for a quiet spell.

``placements`` reads back what the tests and reports need: each pod's node,
pool, phase and the devices its allocated ResourceClaims hold.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelplane.kube import ApiError, Client
from modelplane.lab.state import LabState
from modelplane.labels import POOL

FIELD_MANAGER = "modelplane-lab"
QUIET = 1.0          # seconds without any change before a cluster counts as settled
SETTLE_TIMEOUT = 90.0

# Apply order within one sync: what others need first (a namespace before what lives in it).
_ORDER = ("Namespace", "StorageClass", "ServiceAccount", "Secret", "ConfigMap", "Role", "RoleBinding",
          "PersistentVolumeClaim", "Service", "ResourceClaimTemplate", "GatewayClass", "Gateway",
          "InferencePool", "HTTPRoute", "Deployment", "StatefulSet", "Job", "LeaderWorkerSet")

# What settle watches: (list path, workload?)
_WATCHED = (
    ("/api/v1/pods", False),
    ("/apis/apps/v1/deployments", True),
    ("/apis/apps/v1/replicasets", True),
    ("/apis/apps/v1/statefulsets", True),
    ("/apis/batch/v1/jobs", True),
    ("/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets", True),
    ("/apis/resource.k8s.io/v1/resourceclaims", False),
    ("/api/v1/persistentvolumeclaims", False),
    ("/api/v1/services", False),
    ("/apis/gateway.networking.k8s.io/v1/gateways", False),
    ("/apis/gateway.networking.k8s.io/v1/gatewayclasses", False),
)

Key = tuple[str, str, str, str]  # apiVersion, kind, namespace, name
RETRY_FOR = 30.0   # seconds a call is retried while the server says "not now" (429, 503)


class RetryingClient(Client):
    """``modelplane.kube.Client`` that waits out 429/503 answers: a fresh API server answers
    "storage is (re)initializing" for a while after /readyz is already ok."""

    def request(self, method, path, body=None, **kw):
        deadline = time.monotonic() + RETRY_FOR
        while True:
            try:
                return super().request(method, path, body, **kw)
            except ApiError as err:
                if err.code not in (429, 503) or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)


def key_of(manifest: Mapping[str, Any]) -> Key:
    meta = manifest.get("metadata") or {}
    return (manifest.get("apiVersion", ""), manifest.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))


def _rank(manifest: Mapping[str, Any]) -> int:
    kind = manifest.get("kind", "")
    return _ORDER.index(kind) if kind in _ORDER else len(_ORDER)


def deletes(policies: Iterable[str] | None) -> bool:
    """Does an Object with these management policies delete its remote object when it goes?"""
    p = list(policies or ["*"])
    return "*" in p or "Delete" in p


def observed_view(live: Mapping[str, Any]) -> dict:
    """The live object as ``status.atProvider.manifest`` carries it (managedFields dropped:
    bookkeeping no function reads, and it changes on every write)."""
    out = copy.deepcopy(dict(live))
    (out.get("metadata") or {}).pop("managedFields", None)
    return out


@dataclass
class Applied:
    """One sync result: the live object read back, or the error the server returned."""

    observed: dict | None = None
    error: str = ""


class Remote:
    """Every lab cluster of a state folder, by name."""

    def __init__(self, state: LabState) -> None:
        self.state = state
        self.clients: dict[str, Client] = {}
        for name, info in state.clusters.items():
            pki = Path(info.kubeconfig).parent / "pki"
            self.clients[name] = RetryingClient(info.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")
        self._applied: dict[str, dict[Key, tuple[dict, bool]]] = {n: {} for n in self.clients}

    @classmethod
    def load(cls, root: Path) -> Remote:
        state = LabState.load(root)
        if state is None or not state.clusters:
            raise FileNotFoundError(f"no lab in {root}: start one with `modelplane lab up DIR --state {root}`")
        # A cluster taken down on purpose (`lab cluster-down`) is part of a healthy lab: its client
        # is kept, and its calls fail as a real unreachable cluster's do (``LabPhysical.sync``).
        down = [c.label for c in state.broken()]
        if down:
            raise RuntimeError(f"the lab in {root} is not healthy (not running: {', '.join(down)}); "
                               f"see `modelplane lab status --state {root}`")
        return cls(state)

    def has(self, cluster: str) -> bool:
        return cluster in self.clients

    # ----- apply / read back / delete ------------------------------------------------
    def sync(self, cluster: str, wanted: Mapping[Key, tuple[Mapping[str, Any], bool]]) -> dict[Key, Applied]:
        """Make ``cluster`` hold ``wanted`` (key -> (manifest, deletes when gone)); returns what each
        manifest looks like on the server now (or why the server refused it)."""
        client = self.clients[cluster]
        out: dict[Key, Applied] = {}
        for key, (manifest, _) in sorted(wanted.items(), key=lambda kv: (_rank(kv[1][0]), kv[0])):
            out[key] = self._apply(client, manifest)
        before = self._applied[cluster]
        for key, (manifest, delete) in sorted(before.items()):
            if key not in wanted and delete:
                self._delete(client, manifest)
        self._applied[cluster] = {k: (copy.deepcopy(dict(m)), d) for k, (m, d) in wanted.items()}
        return out

    def _apply(self, client: Client, manifest: Mapping[str, Any]) -> Applied:
        body = copy.deepcopy(dict(manifest))
        body.pop("status", None)
        try:
            live = client.apply(body, field_manager=FIELD_MANAGER, force=True)
        except ApiError as err:
            return Applied(self.observe(client, manifest), f"cannot apply {_label(manifest)}: {err}")
        return Applied(observed_view(live))

    def observe(self, client: Client, manifest: Mapping[str, Any]) -> dict | None:
        try:
            return observed_view(client.get(dict(manifest)))
        except ApiError as err:
            if err.code == 404:
                return None
            raise

    def read(self, cluster: str, manifest: Mapping[str, Any]) -> dict | None:
        return self.observe(self.clients[cluster], manifest)

    @staticmethod
    def _delete(client: Client, manifest: Mapping[str, Any]) -> None:
        try:
            client.request("DELETE", client.path_of(dict(manifest)), {"propagationPolicy": "Background"})
        except ApiError as err:
            if err.code != 404:
                raise

    # ----- settling ---------------------------------------------------------------
    def settle(self, clusters: Iterable[str] | None = None, timeout: float = SETTLE_TIMEOUT) -> list[str]:
        """Wait until the named clusters (default all) are quiet; returns those still busy at the timeout."""
        names = sorted(clusters if clusters is not None else self.clients)
        deadline = time.monotonic() + timeout
        last: dict[str, tuple] = {}
        quiet_since: dict[str, float] = {}
        busy = list(names)
        while busy and time.monotonic() < deadline:
            now = time.monotonic()
            for name in list(busy):
                fingerprint, moving = _snapshot(self.clients[name])
                if moving or fingerprint != last.get(name):
                    last[name] = fingerprint
                    quiet_since[name] = now
                elif now - quiet_since[name] >= QUIET:
                    busy.remove(name)
            if busy:
                time.sleep(0.2)
        return busy

    # ----- what ran where ---------------------------------------------------------
    def placements(self, cluster: str) -> list[dict]:
        """Every pod of ``cluster``: namespace, name, owner labels, node, pool, phase, reason
        (when unschedulable) and the devices its ResourceClaims were allocated."""
        client = self.clients[cluster]
        nodes = {n["metadata"]["name"]: (n["metadata"].get("labels") or {}).get(POOL, "")
                 for n in client.get("/api/v1/nodes").get("items") or []}
        claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c
                  for c in client.get("/apis/resource.k8s.io/v1/resourceclaims").get("items") or []}
        out = []
        for pod in client.get("/api/v1/pods").get("items") or []:
            meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
            node = spec.get("nodeName", "")
            devices = []
            for ref in status.get("resourceClaimStatuses") or []:
                claim = claims.get((meta["namespace"], ref.get("resourceClaimName") or ""))
                for r in (((claim or {}).get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []:
                    devices.append({"request": r.get("request"), "driver": r.get("driver"), "pool": r.get("pool"),
                                    "device": r.get("device"),
                                    "claim": ref.get("resourceClaimName")})
            unsched = next((c for c in status.get("conditions") or []
                            if c.get("type") == "PodScheduled" and c.get("status") == "False"), None)
            out.append({
                "namespace": meta["namespace"], "name": meta["name"], "labels": meta.get("labels") or {},
                "node": node, "pool": nodes.get(node, ""), "phase": status.get("phase", ""),
                "reason": (unsched or {}).get("message", ""), "devices": devices,
                "claimTemplates": [c.get("resourceClaimTemplateName") for c in spec.get("resourceClaims") or []],
            })
        return sorted(out, key=lambda p: (p["namespace"], p["name"]))


def _label(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')} {ns}{meta.get('name')}"


def _snapshot(client: Client) -> tuple[tuple, bool]:
    """(fingerprint of every watched object, something is visibly still in motion)."""
    seen = []
    moving = False
    for path, workload in _WATCHED:
        try:
            items = client.get(path).get("items") or []
        except ApiError as err:
            if err.code == 404:
                continue
            raise
        for obj in items:
            meta = obj["metadata"]
            seen.append((path, meta.get("namespace", ""), meta["name"], meta.get("resourceVersion")))
            status = obj.get("status") or {}
            if workload and status.get("observedGeneration", meta.get("generation")) != meta.get("generation"):
                moving = True
            if path == "/api/v1/pods" and not meta.get("deletionTimestamp"):
                phase = status.get("phase", "Pending")
                scheduled = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
                if phase == "Pending" and not (scheduled and scheduled.get("status") == "False"):
                    moving = True   # being scheduled, or bound and about to run
            if path == "/api/v1/pods" and meta.get("deletionTimestamp"):
                moving = True
            if path == "/api/v1/pods" and status.get("phase") == "Running" and any(
                    c.get("type") == "Ready" and c.get("reason") == "WaitingForEngine"
                    for c in status.get("conditions") or []):
                moving = True   # the lab's engine supervisor has not judged its engine yet (lab.engines)
            moving |= _awaits_standin(path, obj)
    return tuple(sorted(seen)), moving


def _awaits_standin(path: str, obj: Mapping[str, Any]) -> bool:
    """A Gateway, GatewayClass or LoadBalancer Service the lab's stand-in has not answered yet."""
    status = obj.get("status") or {}
    gen = (obj.get("metadata") or {}).get("generation")
    if path.endswith("/gateways"):
        want = "Programmed"
    elif path.endswith("/gatewayclasses"):
        want = "Accepted"
    elif path == "/api/v1/services":
        return (obj.get("spec") or {}).get("type") == "LoadBalancer" and not (status.get("loadBalancer") or {}).get("ingress")
    else:
        return False
    return not any(c.get("type") == want and c.get("status") == "True" and c.get("observedGeneration") == gen
                   for c in status.get("conditions") or [])
