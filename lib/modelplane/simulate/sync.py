"""The clusters' controllers: what each workload cluster runs, and the statuses written back.

A composed provider-kubernetes Object (or an InferenceCluster's Helm Release)
*targets* a workload cluster (``target``). ``ClusterSync`` keeps, per cluster,
the composed resources that target it and the clusters whose physical model
is stale; ``settle`` hands each stale cluster's remote manifests to the
``PhysicalFleet`` (``modelplane.physical.interface``) on the hardware its
InferenceCluster and InferenceClasses describe, then writes back the status
each composed resource's controller reports (``health``). A cluster marked
down (or, with ``simulate --lab``, whose API server does not answer) keeps its objects and
reports them unreachable. Composed resources on
the control plane get their status when applied (``control_plane_status``).
"""
from __future__ import annotations

import base64

from modelplane.objects import manifest_key, manifest_of, provider_config_ref
from modelplane.physical import hardware, provider
from modelplane.physical.interface import PhysicalFleet, RemoteKey
from modelplane.physical.simulated import Physical
from modelplane.simulate import health
from modelplane.simulate.codec import CachingCodec
from modelplane.simulate.tracking import Changes
from modelplane.simulate.world import CLASS_KIND, CLUSTER_KIND, Key, World, without_status

REMOTE_APIS = ("kubernetes.m.crossplane.io/", "helm.m.crossplane.io/")


def target(obj: dict, owner: Key) -> str:
    """The workload cluster a composed resource acts on ('' for the control plane).

    A provider-kubernetes Object always names a cluster's provider config; a
    Helm Release does when an InferenceCluster composes it (its stack), and
    targets the control plane when the InferenceGateway does."""
    api, kind = obj.get("apiVersion", ""), obj.get("kind")
    pc = provider_config_ref(obj)
    if api.startswith(REMOTE_APIS[0]) and kind == "Object":
        return pc
    if api.startswith(REMOTE_APIS[1]) and kind == "Release" and owner[0] == CLUSTER_KIND:
        return pc
    return ""


def remote_key(obj: dict) -> RemoteKey:
    """The key of the remote object an Object carries."""
    return manifest_key(manifest_of(obj))


class ClusterSync:
    """Every workload cluster: the composed resources that target it, its physical model, its reachability."""

    def __init__(self, world: World, changes: Changes, codec: CachingCodec, *,
                 physical: PhysicalFleet | None = None, hardware: dict[str, dict] | None = None,
                 unready: set[str] | None = None):
        self.world = world
        self.changes = changes
        self.codec = codec
        # simulate --lab passes the lab's real clusters (modelplane.lab.LabPhysical) instead.
        self.physical: PhysicalFleet = physical if physical is not None else Physical()
        # InferenceClass name -> spec of the devices its pools' nodes really carry, when that is not
        # what the class says (a what-if: the fleet scheduler reads the class, the nodes do not).
        self.hardware = dict(hardware or {})
        self.unready = set(unready or ())                     # composed resources that never become ready
        self.book = health.AddressBook()
        self.down: set[str] = set()                           # clusters marked not ready
        # cluster -> {(owner XR, resource name)} of the Objects and Releases that target it
        self.targets: dict[str, set[tuple[Key, str]]] = {}
        self.stale: set[str] = set()                          # clusters whose physical model must sync
        # cluster -> (owner, resource name) -> (the object as last synced, what its status depended on)
        self._synced: dict[str, dict[tuple[Key, str], tuple[dict, tuple]]] = {}
        # cluster -> what provider-kubernetes left on it last pass (orphans included: ``physical.provider``)
        self._plans: dict[str, provider.Plan] = {}

    # ----- what changed -------------------------------------------------------------
    def heard(self, key: Key, after: dict | None) -> None:
        """XR ``key`` changed: an InferenceCluster's model, or every model for an InferenceClass, is stale."""
        if key[0] == CLUSTER_KIND:
            self.stale.add(key[2])
            if after is None:
                self.physical.forget(key[2])
                self._plans.pop(key[2], None)
        elif key[0] == CLASS_KIND:
            self.stale.update(self.names())

    def names(self) -> set[str]:
        return {k[2] for k in self.world.xrs if k[0] == CLUSTER_KIND} | set(self.targets)

    def set_ready(self, name: str, ready: bool) -> None:
        """Take a workload cluster down (its API stops answering) or bring it back."""
        (self.down.discard if ready else self.down.add)(name)
        self.stale.add(name)

    def retarget(self, key: Key, name: str, previous: dict | None, cluster: str) -> None:
        """Resource ``name`` of ``key`` (``previous`` as it was) now targets ``cluster``."""
        before = target(previous, key) if previous else ""
        if before and before != cluster:
            self.targets.get(before, set()).discard((key, name))
            self.stale.add(before)
        self.targets.setdefault(cluster, set()).add((key, name))

    def release(self, key: Key, name: str, gone: dict) -> None:
        """Resource ``name`` of ``key`` is no longer composed: the cluster it targeted no longer holds it."""
        cluster = target(gone, key)
        if cluster:
            self.targets.get(cluster, set()).discard((key, name))
            self.stale.add(cluster)

    # ----- statuses -----------------------------------------------------------------
    def ready(self, name: str, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        return name not in self.unready and meta.get("name") not in self.unready

    def control_plane_status(self, name: str, obj: dict, previous: dict | None) -> dict:
        """The status the control plane's controllers report for composed resource ``name``:
        read back from the lab's control plane when it holds such objects (``simulate --lab``
        with a data plane), else the model's."""
        real = getattr(self.physical, "control_plane", None)
        if real is not None and real.holds(obj) and self.ready(name, obj):
            return health.restamp(real.status(obj), previous)
        place = health.Place("control-plane", self.world.now(), self.book)
        status = health.composed_status(obj, place, ready=self.ready(name, obj))
        return health.restamp(status, previous)

    def _lookup(self, api: str, kind: str, namespace: str, name: str) -> dict | None:
        """A control-plane object an Object references (the directory's Secrets), None when absent."""
        for other in self.world.others:
            meta = other.get("metadata") or {}
            if (other.get("kind"), meta.get("namespace", ""), meta.get("name")) == (kind, namespace, name) \
                    and other.get("apiVersion", "v1") == api:
                return _with_data(other)
        return None

    # ----- the physical clusters --------------------------------------------------------
    def settle(self) -> None:
        """Sync every stale cluster, in name order."""
        while self.stale:
            cluster = min(self.stale)
            self.stale.discard(cluster)
            self._sync(cluster)

    def _hardware(self, cluster: str) -> tuple[hardware.Hardware, str] | None:
        state = self.world.xrs.get((CLUSTER_KIND, "", cluster))
        if state is None:
            return None
        used = {p.get("class", "") for p in (state.obj.get("spec") or {}).get("nodePools") or []}
        classes = {}
        for name in used:
            cls = self.world.xrs.get((CLASS_KIND, "", name))
            if name in self.hardware:
                classes[name] = self.hardware[name]
            elif cls is not None:
                classes[name] = cls.obj.get("spec") or {}
        ready = _ready_pools(state.composed)
        key = hardware.fingerprint(state.obj, classes, ready)
        known = self.physical.clusters.get(cluster)
        if known is not None and known.hardware_key == key:
            return known.hardware, key
        try:
            return hardware.build(state.obj, classes, ready), key
        except Exception as err:  # noqa: BLE001 - a cluster the lab builders refuse has no hardware
            return hardware.Hardware(), f"{key}/{type(err).__name__}"

    def _sync(self, cluster: str) -> None:
        now = self.world.now()
        members = sorted(self.targets.get(cluster, ()))
        objs: list[tuple[Key, str, dict]] = []
        for owner, name in members:
            state = self.world.xrs.get(owner)
            obj = state.composed.get(name) if state else None
            if obj is not None and target(obj, owner) == cluster:
                objs.append((owner, name, obj))
        # What the provider leaves on the cluster: management policies and references honoured.
        objects = [obj for _, _, obj in objs if obj.get("kind") == "Object"]
        plan = provider.plan(objects, self._plans.get(cluster, provider.Plan()), self._lookup)
        self._plans[cluster] = plan
        errors = {id(objects[i]): why for i, why in plan.errors.items()}
        manifests: dict[RemoteKey, dict] = plan.held
        hw = self._hardware(cluster)
        reachable: str | None = None
        if hw is None:
            reachable = f"ClusterProviderConfig {cluster} does not exist (no InferenceCluster {cluster})"
            self.physical.forget(cluster)
            wc = None
        else:
            wc = self.physical.sync(cluster, hw[0], hw[1], manifests, now)
            if cluster in self.down:
                reachable = f"cluster {cluster} is marked not ready"
            elif getattr(wc, "unreachable", ""):
                # simulate --lab: the cluster's API server did not answer (refused, timed out); its
                # objects keep their last observed status and report the connect error.
                reachable = wc.unreachable
        place = health.Place(
            cluster, now, self.book,
            workload=(lambda kind, ns, name: wc.status((kind, ns, name), now)) if wc else (lambda *_: None),
            generation=(lambda kind, ns, name: wc.generation((kind, ns, name))) if wc else (lambda *_: 1),
            has=lambda kind, ns, name: (kind, ns, name) in manifests,
        )
        real = wc is not None and wc.holds_objects   # simulate --lab: objects live on real servers
        route_targets = frozenset(manifests)
        last, synced = self._synced.get(cluster, {}), {}
        self._synced[cluster] = synced
        for owner, name, obj in objs:
            previous = obj.get("status") or {}
            # What this status depends on besides the object: unchanged since the last sync (and the
            # object the same one), the status is the same too and is not worked out again.
            remote = remote_key(obj) if obj.get("kind") == "Object" else None
            held = remote is None or remote in manifests
            signature = (reachable, now, self.ready(name, obj), errors.get(id(obj)), held,
                         wc.status(remote, now) if wc is not None and remote and remote[0] in health.WORKLOAD_KINDS
                         else route_targets if remote and remote[0] in ("HTTPRoute", "InferencePool") else None)
            seen = last.get((owner, name))
            if not real and seen is not None and seen[0] is obj and seen[1] == signature:
                synced[(owner, name)] = seen
                continue
            observed = None
            if obj.get("kind") == "Object" and reachable is None:
                manifest = manifest_of(obj)
                observed = wc.observed(manifest) if real else health.observed_remote(manifest, place)
            status = health.composed_status(obj, place, ready=self.ready(name, obj), unreachable=reachable,
                                            observed=observed, previous=previous)
            if obj.get("kind") == "Object" and reachable is None:
                status = _provider_says(status, errors.get(id(obj), ""), held, cluster)
            if real and obj.get("kind") == "Object" and reachable is None:
                status = wc.judge(obj, status)   # a refused or absent remote object is not Ready
            status = health.restamp(status, previous)
            if status != previous:
                state = self.world.xrs[owner]
                obj = {**without_status(obj), **({"status": status} if status else {})}
                self.codec.forget(state.composed[name])
                state.composed = {**state.composed, name: obj}
                self.changes.mark(owner)
            synced[(owner, name)] = (obj, signature)


def _provider_says(status: dict, error: str, held: bool, cluster: str) -> dict:
    """An Object's status corrected by what the provider could not do (``physical.provider``): a
    failed observe is ``Synced=False`` with its error, and a remote object that does not exist
    leaves nothing in ``atProvider`` and is not Ready, whatever the readiness policy."""
    if not error and held:
        return status
    if not held:
        status = {k: v for k, v in status.items() if k != "atProvider"}
    for cond in status.get("conditions") or []:
        if error and cond.get("type") == "Synced":
            cond.update(status="False", reason="ReconcileError", message=error)
        elif not held and cond.get("type") == "Ready":
            cond.update(status="False", reason="Unavailable",
                        message=f"the remote object does not exist on cluster {cluster}")
    return status


def _with_data(secret: dict) -> dict:
    """A Secret as the API server stores it: ``stringData`` folded, base64-encoded, into ``data``."""
    if not secret.get("stringData"):
        return secret
    encoded = {k: base64.b64encode(str(v).encode()).decode() for k, v in secret["stringData"].items()}
    data = {**(secret.get("data") or {}), **encoded}
    return {**{k: v for k, v in secret.items() if k != "stringData"}, "data": data}


def _ready_pools(composed: dict[str, dict]) -> set[str] | None:
    """Pools whose node pool resource reports Ready; None when the cluster composes none (Existing)."""
    pools = {name.removeprefix("nodepool-"): obj for name, obj in composed.items() if name.startswith("nodepool-")}
    if not pools:
        return None
    return {p for p, obj in pools.items()
            if any(c.get("type") == "Ready" and c.get("status") == "True"
                   for c in (obj.get("status") or {}).get("conditions") or [])}
