"""``simulate --lab``: the lab's real clusters in place of simulate's physical model.

``LabPhysical`` is a ``modelplane.physical.interface.PhysicalFleet`` and each
``LabCluster`` a ``ClusterView`` that ``holds_objects``: ``observed`` is the
live remote object, read back from the lab's API server, which the reconcile
loop puts in the Object's ``status.atProvider.manifest`` instead of a status
it would otherwise make up.

``sync`` hands the cluster exactly the remote manifests composed for it
(``remote.Remote.sync``: server-side apply in dependency order; what is no
longer composed is deleted, except Namespaces, which Modelplane composes
without the Delete management policy), waits until the real controllers,
kube-scheduler and kwok are quiet, and reads every object back. A pod the
real scheduler cannot bind stays Pending with the scheduler's own reason, and
its workload is not Available: the loop sees exactly that.

A cluster whose API server does not answer (``lab cluster-down``, or a crash) is what
provider-kubernetes meets on an unreachable cluster: ``sync`` does not raise, it returns the
cluster with ``unreachable`` saying why (the connect error) and its objects as last observed,
so the loop reports them ``Synced=False`` with that error and keeps their last status
(``simulate.sync``); the next sync that gets through reads everything back again.

Hardware is whatever ``lab up`` built: the simulated hardware handed to
``sync`` is only checked against it (a cluster the lab does not have, or pools
of another shape, is an error naming the fix).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from modelplane.errors import InputError
from modelplane.kube import ApiError
from modelplane.lab.controlplane import LabControlPlane
from modelplane.lab.dataplane import GATEWAY_CLASS
from modelplane.lab.remote import Remote
from modelplane.lab.state import default_dir
from modelplane.labels import POOL
from modelplane.objects import manifest_key, manifest_of
from modelplane.physical.interface import PendingPod, PoolUse, RemoteKey
from modelplane.physical.inventory import LAB_LABEL

SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
# Cluster-scoped kinds a simulate run may compose, removed by a reset (the lab's own are labelled).
_CLUSTER_SCOPED = (("storage.k8s.io/v1", "StorageClass", "storageclasses"),
                   ("gateway.networking.k8s.io/v1", "GatewayClass", "gatewayclasses"))


class LabMismatch(InputError):
    """The directory being simulated describes clusters the running lab was not built for."""

    def __init__(self, message: str) -> None:
        super().__init__("--lab", message)


def open_lab(state: Path | str | None, hardware: Mapping[str, Any] | None = None) -> LabPhysical:
    """The running lab in ``state`` (default ``lab.state.default_dir()``), emptied of earlier runs."""
    if hardware:
        raise InputError("--hardware", "the lab's nodes carry what `modelplane lab up` gave them; drop --hardware "
                                       "with --lab (or start the lab from the classes you want)")
    try:
        return LabPhysical.load(Path(state) if state else default_dir())
    except (FileNotFoundError, RuntimeError) as err:
        raise InputError("--lab", str(err)) from None


def unreachable(name: str, server: str, err: OSError) -> str:
    """Why lab cluster ``name`` cannot be reached, as a client of ``server`` sees it (the reason
    urllib wraps: "[Errno 111] Connection refused", "timed out")."""
    reason = getattr(err, "reason", None) or err
    return f"lab cluster {name} does not answer at {server}: {reason}"


def warnings(physical: LabPhysical) -> list[str]:
    """What the run should not hide: clusters that never went quiet or cannot be reached, objects
    the servers refused."""
    out = [f"lab cluster {name} was still changing when the run ended" for name in sorted(physical.unsettled)]
    out += [c.unreachable for _, c in sorted(physical.clusters.items()) if c.unreachable]
    for name, cluster in sorted(physical.clusters.items()):
        out += [f"{name}: {msg}" for _, msg in sorted(cluster.errors.items())]
    return out


class LabCluster:
    """One lab cluster as the loop sees it after a sync: a ``physical.interface.ClusterView``."""

    holds_objects = True    # the objects live on the lab's API server: read back, never memoised

    def __init__(self, name: str, remote: Remote) -> None:
        self.name = name
        self.remote = remote
        self.live: dict[RemoteKey, dict | None] = {}
        self.manifests: dict[RemoteKey, dict] = {}
        self.errors: dict[RemoteKey, str] = {}
        self.hardware: Any = None        # what the simulation handed over (checked against the lab's nodes)
        self.hardware_key = ""
        self.unreachable = ""            # why the last sync could not reach its API server ("" when it did)

    # ----- the loop's view ----------------------------------------------------------
    def observed(self, manifest: Mapping[str, Any]) -> dict | None:
        return self.live.get(manifest_key(manifest))

    def judge(self, obj: Mapping[str, Any], status: dict) -> dict:
        """``status`` of a provider-kubernetes Object, corrected for what the server said: an apply
        the server refused is ``Synced=False`` with its message, and a remote object that does not
        exist is not Ready whatever the readiness policy (provider-kubernetes never got it created)."""
        key = manifest_key(manifest_of(obj))
        error = self.errors.get(key, "")
        if not error and self.live.get(key) is not None:
            return status
        why = error or f"{key[0]} {key[1] + '/' if key[1] else ''}{key[2]} does not exist on lab cluster {self.name}"
        for cond in status.get("conditions") or []:
            if cond.get("type") == "Ready" or (error and cond.get("type") == "Synced"):
                cond.update(status="False", message=why,
                            reason="Unavailable" if cond["type"] == "Ready" else "ReconcileError")
        return status

    def status(self, key: RemoteKey, now: str = "") -> dict | None:
        live = self.live.get(key)
        return (live or {}).get("status") if live else None

    def generation(self, key: RemoteKey) -> int:
        live = self.live.get(key)
        return int(((live or {}).get("metadata") or {}).get("generation") or 1)

    # ----- what really runs ---------------------------------------------------------
    def capacity(self) -> list[PoolUse]:
        """Devices allocated to running or pending pods / devices published, per pool (none known
        while the cluster cannot be reached)."""
        if self.unreachable:
            return []
        client = self.remote.clients[self.name]
        pool_of = {n["metadata"]["name"]: (n["metadata"].get("labels") or {}).get(POOL, "")
                   for n in client.get("/api/v1/nodes").get("items") or []}
        total: dict[str, int] = {}
        for s in client.get("/apis/resource.k8s.io/v1/resourceslices").get("items") or []:
            pool = pool_of.get((s.get("spec") or {}).get("nodeName", ""), "")
            total[pool] = total.get(pool, 0) + len((s.get("spec") or {}).get("devices") or [])
        used = {p: 0 for p in total}
        for c in client.get("/apis/resource.k8s.io/v1/resourceclaims").get("items") or []:
            for r in ((((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []):
                pool = pool_of.get(r.get("pool", ""), "")  # node-local drivers: the slice pool is the node
                used[pool] = used.get(pool, 0) + 1
        nodes = getattr(self.hardware, "nodes", ()) or ()
        order = list(dict.fromkeys([n.pool for n in nodes] + sorted(set(pool_of.values()))))
        return [PoolUse(p, used.get(p, 0), total.get(p, 0)) for p in order]

    def pending(self) -> list[PendingPod]:
        if self.unreachable:
            return []
        owners = _owners(self.remote, self.name)
        out = []
        for p in self.remote.placements(self.name):
            if p["phase"] == "Pending" and not p["node"]:
                out.append(PendingPod(owners.get((p["namespace"], p["name"]), "Pod"), p["name"],
                                      p["reason"] or "not scheduled yet"))
        return out


def _owners(remote: Remote, cluster: str) -> dict[tuple[str, str], str]:
    """(namespace, pod) -> ``Kind/namespace/name`` of the workload that owns it (through its
    ReplicaSet or StatefulSet)."""
    client = remote.clients[cluster]
    parents: dict[tuple[str, str, str], str] = {}
    for path, kind in (("/apis/apps/v1/replicasets", "ReplicaSet"), ("/apis/apps/v1/statefulsets", "StatefulSet")):
        for obj in client.get(path).get("items") or []:
            meta = obj["metadata"]
            ref = next(iter(meta.get("ownerReferences") or []), None)
            top = f"{ref['kind']}/{meta['namespace']}/{ref['name']}" if ref else f"{kind}/{meta['namespace']}/{meta['name']}"
            parents[(kind, meta["namespace"], meta["name"])] = top
    out = {}
    for pod in client.get("/api/v1/pods").get("items") or []:
        meta = pod["metadata"]
        ref = next(iter(meta.get("ownerReferences") or []), None)
        if ref:
            out[(meta["namespace"], meta["name"])] = parents.get(
                (ref["kind"], meta["namespace"], ref["name"]), f"{ref['kind']}/{meta['namespace']}/{ref['name']}")
    return out


class LabPhysical:
    """Every lab cluster the loop has synced, by name."""

    def __init__(self, remote: Remote, *, reset: bool = True) -> None:
        self.remote = remote
        self.clusters: dict[str, LabCluster] = {}
        # With a data plane: the control plane's routes, Services and Gateway go to the lab's
        # control-plane API server and its Traefik (simulate.sync asks it for their status).
        cp = remote.state.control_plane
        self.control_plane = LabControlPlane(cp) if cp is not None and remote.state.network is not None else None
        self.unsettled: set[str] = set()
        self.syncs = 0
        self.seconds = {"reset": 0.0, "apply": 0.0, "settle": 0.0, "read": 0.0}
        if reset:
            start = time.monotonic()
            # A cluster taken down on purpose cannot be emptied: its first sync reports it unreachable.
            names = sorted(set(remote.clients) - set(remote.state.outages))
            for name in names:       # every cluster's deletions first, then the waits: they overlap
                self.reset(name, wait=False)
            for name in names:
                self.reset(name)
            if self.control_plane is not None:
                self.control_plane.reset()
            self.seconds["reset"] += time.monotonic() - start

    @classmethod
    def load(cls, root: Path, *, reset: bool = True) -> LabPhysical:
        return cls(Remote.load(root), reset=reset)

    def adopt(self, xr: Mapping[str, Any]) -> Mapping[str, Any]:
        """The lab serves every gateway with its own data plane (Traefik, GatewayClass
        ``modelplane-lab``), through the API's bring-your-own-gateway fields: an InferenceCluster
        or the InferenceGateway that names no class gets the lab's (one that names one keeps it)."""
        if self.remote.state.network is None:
            return xr
        kind, spec = xr.get("kind"), xr.get("spec") or {}
        if kind == "InferenceCluster" and not (spec.get("gateway") or {}).get("className"):
            return {**xr, "spec": {**spec, "gateway": {**(spec.get("gateway") or {}), "className": GATEWAY_CLASS}}}
        if kind == "InferenceGateway" and not spec.get("gatewayClassName") and self.control_plane is not None:
            return {**xr, "spec": {**spec, "gatewayClassName": GATEWAY_CLASS}}
        return xr

    # ----- the interface of simulate's Physical ---------------------------------------------
    def sync(self, name: str, hardware: Any, hardware_key: str, manifests: Mapping[RemoteKey, Mapping[str, Any]],
             now: str) -> LabCluster:
        if not self.remote.has(name):
            raise LabMismatch(f"InferenceCluster {name} has no lab cluster (the lab has "
                              f"{', '.join(sorted(self.remote.clients))}); run `modelplane lab up` on a directory "
                              f"that defines it")
        cluster = self.clusters.get(name) or LabCluster(name, self.remote)
        self.clusters[name] = cluster
        self.syncs += 1
        try:
            self._sync(cluster, hardware, hardware_key, manifests)
        except OSError as err:     # refused, reset, timed out: the API server does not answer
            cluster.unreachable = unreachable(name, self.remote.clients[name].server, err)
            self.unsettled.discard(name)
        return cluster

    def _sync(self, cluster: LabCluster, hardware: Any, hardware_key: str,
              manifests: Mapping[RemoteKey, Mapping[str, Any]]) -> None:
        """Apply, settle, read back; ``cluster`` keeps what it last observed until all of it is read."""
        name = cluster.name
        self._check_hardware(name, hardware)
        wanted = {_full_key(m): (dict(m), m.get("kind") != "Namespace") for m in manifests.values()}
        t0 = time.monotonic()
        applied = self.remote.sync(name, wanted)
        t1 = time.monotonic()
        busy = bool(self.remote.settle([name]))
        t2 = time.monotonic()
        errors, live = {}, {}
        for key, manifest in manifests.items():
            result = applied.get(_full_key(manifest))
            if result is not None and result.error:
                errors[key] = result.error
            live[key] = self.remote.read(name, manifest)
        (self.unsettled.add if busy else self.unsettled.discard)(name)
        cluster.hardware, cluster.hardware_key = hardware, hardware_key
        cluster.manifests = {k: dict(m) for k, m in manifests.items()}
        cluster.errors, cluster.live, cluster.unreachable = errors, live, ""
        self.seconds["apply"] += t1 - t0
        self.seconds["settle"] += t2 - t1
        self.seconds["read"] += time.monotonic() - t2

    def forget(self, name: str) -> None:
        """The InferenceCluster is gone: nothing runs there any more."""
        if self.remote.has(name):
            try:
                self.remote.sync(name, {})
            except OSError:    # unreachable: what ran there stays, as provider-kubernetes could not delete it
                pass
        self.clusters.pop(name, None)

    # ----- helpers ----------------------------------------------------------------
    def _check_hardware(self, name: str, hardware: Any) -> None:
        want = {(n.name, n.pool, len(n.devices)) for n in getattr(hardware, "nodes", ())}
        if not want:
            return  # no pool is up yet in the simulation: the lab's nodes wait unused
        client = self.remote.clients[name]
        slices: dict[str, int] = {}
        for s in client.get("/apis/resource.k8s.io/v1/resourceslices").get("items") or []:
            node = (s.get("spec") or {}).get("nodeName", "")
            slices[node] = slices.get(node, 0) + len((s.get("spec") or {}).get("devices") or [])
        have = {(n["metadata"]["name"], (n["metadata"].get("labels") or {}).get(POOL, ""),
                 slices.get(n["metadata"]["name"], 0))
                for n in client.get("/api/v1/nodes").get("items") or []}
        if not want <= have:
            missing = sorted(want - have)[:3]
            raise LabMismatch(f"lab cluster {name} was built for other pools or classes (e.g. it lacks node "
                              f"{missing[0][0]} of pool {missing[0][1]} with {missing[0][2]} devices); run "
                              f"`modelplane lab down` and `modelplane lab up` on this directory")

    def reset(self, name: str, timeout: float = 60.0, *, wait: bool = True) -> None:
        """Remove everything earlier runs applied to cluster ``name``: a run starts from empty clusters."""
        client = self.remote.clients[name]
        for ns in client.get("/api/v1/namespaces").get("items") or []:
            n = ns["metadata"]["name"]
            if n not in SYSTEM_NAMESPACES and not ns["metadata"].get("deletionTimestamp"):
                _delete(client, f"/api/v1/namespaces/{n}")
        for api, _kind, plural in _CLUSTER_SCOPED:
            try:
                items = client.get(f"/apis/{api}/{plural}").get("items") or []
            except ApiError as err:
                if err.code == 404:
                    continue
                raise
            for obj in items:
                if LAB_LABEL not in (obj["metadata"].get("labels") or {}):
                    _delete(client, f"/apis/{api}/{plural}/{obj['metadata']['name']}")
        if not wait:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            left = [ns["metadata"]["name"] for ns in client.get("/api/v1/namespaces").get("items") or []
                    if ns["metadata"]["name"] not in SYSTEM_NAMESPACES]
            if not left:
                break
            time.sleep(0.2)
        else:
            raise RuntimeError(f"lab cluster {name}: namespaces {left} were not deleted within {timeout:.0f} s")
        free_volumes(client)
        self.remote.settle([name])


def volumes_to_free(pvs: list[Mapping[str, Any]]) -> list[str]:
    """The lab's static volumes still bound or Released to a claim (the claims went with their
    namespaces): with ``persistentVolumeReclaimPolicy: Retain`` nothing frees them, and each run
    would leave one volume fewer for the next (``physical.inventory.CACHE_VOLUMES`` per class)."""
    return sorted(pv["metadata"]["name"] for pv in pvs
                  if LAB_LABEL in (pv["metadata"].get("labels") or {}) and (pv.get("spec") or {}).get("claimRef"))


def free_volumes(client) -> None:
    """Every lab volume back to Available, as a reset cluster had it (claimRef dropped)."""
    for name in volumes_to_free(client.get("/api/v1/persistentvolumes").get("items") or []):
        try:
            client.request("PATCH", f"/api/v1/persistentvolumes/{name}", {"spec": {"claimRef": None}},
                           content_type="application/merge-patch+json")
        except ApiError as err:
            if err.code != 404:
                raise


def _full_key(manifest: Mapping[str, Any]) -> tuple[str, str, str, str]:
    meta = manifest.get("metadata") or {}
    return (manifest.get("apiVersion", ""), manifest.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))


def _delete(client, path: str) -> None:
    try:
        client.request("DELETE", path, {"propagationPolicy": "Background"})
    except ApiError as err:
        if err.code != 404:
            raise
