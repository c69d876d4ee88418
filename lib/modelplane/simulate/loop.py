"""Reconcile a whole fleet until nothing changes, as a watch-driven control plane would.

A round walks ``KIND_ORDER``; for each kind it renders the XRs that are
*dirty* — through their Composition and the real functions over gRPC
(``modelplane.render``, engine-mode namespace lookups) — then applies the
results as the API server and the controllers would:

- the XR's status becomes what its functions wrote (condition times move
  only on a transition, at the simulated clock);
- composed XRs (ModelReplica, ModelEndpoint) are applied as XRs in their own
  right; ones no longer desired are deleted with everything they composed;
- other composed resources get their controllers' status (``health``); the
  remote objects of every workload cluster are handed to its physical model
  (``physical``), which binds pods to devices and earns workloads their
  status.

An XR is dirty when something its render read has changed since its last
render: its own spec or metadata, or a status it did not write itself (no
Modelplane function's answer depends on its XR's own status: a function
reads it only to keep it while its inputs are not fetched yet, a call whose
answer the requirements loop replaces; ``tests/simulate/test_fleet.py`` renders
every XR of the example fleet with other statuses); an observed composed resource or
composed XR; a required resource its selectors return (``store.Watches``);
or the TTL its functions asked for has passed on the simulated clock. The
fixed point is a round that leaves nothing dirty. XRs of one kind never read
each other, so a kind's dirty XRs render concurrently (the functions are
separate processes) against the world as it was when the wave began, and
their results are applied in name order: the outcome does not depend on
which render finishes first. ModelDeployments place replicas from what the
clusters report, so they render in bounded waves (``BATCH``) with the
InferenceClusters rendering between waves that placed something: a wave
sees the placements of the waves before it instead of herding onto the
same pools. ``incremental=False`` renders every XR every
round and stops at the first round that changes nothing: the reference the
incremental mode is tested against.

A FATAL result leaves the XR's children as they were and is shown in its
conditions, as Crossplane would show a ReconcileError.
"""
from __future__ import annotations

import hashlib
import math
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane import functions, paths
from modelplane.physical import hardware
from modelplane.physical.interface import PhysicalFleet, RemoteKey
from modelplane.physical.simulated import Physical
from modelplane.render import FunctionPool, RenderError, RenderInputs, RenderOutput, reader, render
from modelplane.simulate import health
from modelplane.simulate.codec import CachingCodec
from modelplane.simulate.store import Selector, Store, Watches
from modelplane.simulate.world import KIND_ORDER, Key, World, key_of, label
from modelplane.validate.admission import is_xr, load_dir

RESOURCE_NAME = "crossplane.io/composition-resource-name"
# The pipeline context key that carries the simulated clock to the functions (docs/contracts.md).
NOW_CONTEXT = "modelplane.ai/now"
REMOTE_APIS = ("kubernetes.m.crossplane.io/", "helm.m.crossplane.io/")
CLUSTER_KIND = "InferenceCluster"
CLASS_KIND = "InferenceClass"
REPLICA_KIND = "ModelReplica"
DEPLOYMENT_KIND = "ModelDeployment"
BATCH = {"ModelDeployment": 10}
# kind -> kinds of the XRs that require it but never read its status: a change to its status alone
# does not wake them. compose-inference-cluster publishes allocations from the ModelReplicas'
# spec.placement (platform/pools.py), and a replica's status changes several times as it comes up
# (tests/simulate/test_status_blind.py renders a cluster both ways).
STATUS_BLIND = {REPLICA_KIND: frozenset({CLUSTER_KIND})}
SPREAD = {"ModelDeployment": 2, "ModelReplica": 2, "InferenceCluster": 2}


@dataclass
class Outcome:
    rounds: int
    converged: bool
    still_changing: list[str] = field(default_factory=list)
    renders: int = 0


def load_compositions(apis: Path = paths.APIS) -> dict[str, dict]:
    """Composite kind -> its Composition, from apis/*/composition.yaml."""
    out = {}
    for path in sorted(Path(apis).glob("*/composition.yaml")):
        comp = reader.load_one(path.read_text(encoding="utf-8"))
        out[((comp.get("spec") or {}).get("compositeTypeRef") or {}).get("kind", "")] = comp
    return out


def load_functions(path: Path | None = None) -> list[dict]:
    """The Function objects the Compositions name: from ``path``, else one per registered function.

    The default is built from the registry rather than read from examples/functions.yaml, which an
    installed wheel does not have; each is served locally by name (``modelplane.render.runners``)."""
    if path is None:
        return [{"apiVersion": "pkg.crossplane.io/v1", "kind": "Function", "metadata": {"name": f"modelplane-{name}"}}
                for name in functions.available()]
    return [d for d in reader.load_all(Path(path).read_text(encoding="utf-8")) if isinstance(d, dict)]


def _target(obj: dict, owner: Key) -> str:
    """The workload cluster a composed resource acts on ('' for the control plane).

    A provider-kubernetes Object always names a cluster's provider config; a
    Helm Release does when an InferenceCluster composes it (its stack), and
    targets the control plane when the InferenceGateway does."""
    api, kind = obj.get("apiVersion", ""), obj.get("kind")
    pc = ((obj.get("spec") or {}).get("providerConfigRef") or {}).get("name", "")
    if api.startswith(REMOTE_APIS[0]) and kind == "Object":
        return pc
    if api.startswith(REMOTE_APIS[1]) and kind == "Release" and owner[0] == CLUSTER_KIND:
        return pc
    return ""


def _remote_key(obj: dict) -> RemoteKey:
    manifest = ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest") or {}
    meta = manifest.get("metadata") or {}
    return (manifest.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))


def _stamped(status: dict, now: str) -> dict:
    """Render writes one fixed time on every condition; a new condition happens now."""
    for cond in status.get("conditions") or []:
        cond["lastTransitionTime"] = now
    return status


class Simulator:
    """Drives a ``World`` to its fixed point through the real functions."""

    def __init__(self, world: World, pool: FunctionPool, *, compositions: dict[str, dict] | None = None,
                 functions: list[dict] | None = None, unready: set[str] | None = None, timeout: float = 60.0,
                 incremental: bool = True, workers: int = 4,
                 on_round: Callable[[Simulator, int], None] | None = None,
                 hardware: dict[str, dict] | None = None, physical: PhysicalFleet | None = None,
                 batch: dict[str, int] | None = None, spread: dict[str, int] | None = None):
        self.world = world
        self.pool = pool
        self.compositions = compositions if compositions is not None else load_compositions()
        self.functions = functions if functions is not None else load_functions()
        self.unready = set(unready or ())
        self.timeout = timeout
        self.incremental = incremental
        self.workers = max(1, workers)
        self.on_round = on_round
        # InferenceClass name -> spec of the devices its pools' nodes really carry, when that is not
        # what the class says (a what-if: the fleet scheduler reads the class, the nodes do not).
        self.hardware = dict(hardware or {})
        # kind -> at most this many of its dirty XRs render per round, the longest waiting first
        # (incremental mode). A ModelDeployment places replicas from what
        # the clusters report; ones rendered in the same wave cannot see each other's placements, so
        # a wave of hundreds herds onto the same pools and is evicted in admission order, round after
        # round. Bounded waves let clusters publish each batch's placements before the next batch
        # decides, as a control plane with a few reconcile workers per kind does.
        self.batch = dict(BATCH if batch is None else batch)
        self._limits = dict(self.batch)
        # kind -> function processes its waves spread over: the kinds with the most or the dearest
        # renders get two, so both cores work while the simulator waits (a function is one process).
        self.spread = dict(SPREAD if spread is None else spread)
        self._extra_pools: list[FunctionPool] = []
        # Their processes must not outlive the simulator, whoever forgets to close it.
        weakref.finalize(self, _close_all, self._extra_pools)
        self._placed = 0                                      # ModelReplicas created or deleted so far
        self._moved = False                                   # the last wave created or deleted some
        # cluster -> (owner, resource name) -> (the object as last synced, what its status depended on)
        self._synced: dict[str, dict[tuple[Key, str], tuple[dict, tuple]]] = {}
        self.book = health.AddressBook()
        # simulate --lab passes the lab's real clusters (modelplane.lab.LabPhysical) instead.
        self.physical: PhysicalFleet = physical if physical is not None else Physical()
        self.store = Store()
        self.watches = Watches()
        # Dirty XRs, oldest first (a dict keeps the order keys were marked in).
        self.dirty: dict[Key, None] = dict.fromkeys(world.ordered())
        # The XR whose own render's status is being written: that write does not make it dirty.
        self._own_render: Key | None = None
        self.down: set[str] = set()                           # clusters marked not ready
        self.due: dict[Key, int] = {}                         # XR -> clock second its TTL passes
        self.renders = 0
        self.rounds = 0
        # cluster -> {(owner XR, resource name)} of the Objects and Releases that target it
        self.targets: dict[str, set[tuple[Key, str]]] = {}
        self.physics_dirty: set[str] = set()
        self.codec = CachingCodec()
        # child XR -> (its live object, resource name, the view its parent observes)
        self._views: dict[Key, tuple[dict, str, dict]] = {}
        for key, state in world.xrs.items():
            self.store.put(key, state.obj)
        for obj in world.others:
            self.store.put(key_of(obj), obj)
        world.listeners.append(self._on_change)

    # ----- change tracking ----------------------------------------------------------
    def mark(self, key: Key | None) -> None:
        if key is not None and key in self.world.xrs:
            self.dirty.setdefault(key)

    def _on_change(self, key: Key, before: dict | None, after: dict | None, parent: Key | None) -> None:
        if before is not None:
            self.codec.forget(before)
        if (before is None or after is None) and key[0] == REPLICA_KIND:
            self._placed += 1
        if after is None:
            self.store.remove(key, before or {})
        else:
            self.store.put(key, after)
        status_only = _status_only(before, after)
        if not (status_only and key == self._own_render):
            self.mark(key)
        self.mark(parent)
        blind = STATUS_BLIND.get(key[0], frozenset()) if status_only else frozenset()
        for reader_key in self.watches.readers(before, after, blind=blind):
            if status_only and key[0] == CLUSTER_KIND and reader_key[0] == DEPLOYMENT_KIND:
                state = self.world.xrs.get(reader_key)
                if state is not None and not _concerns(state.obj, key[2], before, after):
                    continue
            self.mark(reader_key)
        if after is None:
            view = self._views.pop(key, None)
            if view is not None:
                self.codec.forget(view[2])
            self.watches.forget(key)
            self.due.pop(key, None)
            self.dirty.pop(key, None)
        if key[0] == CLUSTER_KIND:
            self.physics_dirty.add(key[2])
            if after is None:
                self.physical.forget(key[2])
        elif key[0] == CLASS_KIND:
            self.physics_dirty.update(self._cluster_names())

    def set_cluster_ready(self, name: str, ready: bool) -> None:
        """Take a workload cluster down (its API stops answering) or bring it back."""
        (self.down.discard if ready else self.down.add)(name)
        self.physics_dirty.add(name)

    def _cluster_names(self) -> set[str]:
        return {k[2] for k in self.world.xrs if k[0] == CLUSTER_KIND} | set(self.targets)

    def add_other(self, obj: dict) -> None:
        """Create or replace an object that is not an XR (a Secret): functions may require it."""
        key = key_of(obj)
        self.world.others = [o for o in self.world.others if key_of(o) != key] + [obj]
        before = self.store.get(key)
        self.store.put(key, obj)
        for reader_key in self.watches.readers(before, obj):
            self.mark(reader_key)

    def next_due(self) -> int | None:
        """The clock second at which the next XR asked to be reconciled again (its response TTL)."""
        return min(self.due.values(), default=None)

    def advance(self, seconds: int) -> None:
        """Move the simulated clock; XRs whose TTL passed are dirty again."""
        self.world.clock += seconds
        for key, due in list(self.due.items()):
            if due <= self.world.clock:
                self.mark(key)
                del self.due[key]
        self.physics_dirty.update(self._cluster_names())

    # ----- one XR ------------------------------------------------------------------
    def _observed(self, key: Key) -> list[dict]:
        """Composed resources as Crossplane would observe them (shared, never modified: render only reads)."""
        out = []
        for name, obj in sorted(self.world.xrs[key].composed.items()):
            child_key = key_of(obj)
            if is_xr(obj) and child_key in self.world.xrs:
                live = self.world.xrs[child_key].obj
                seen = self._views.get(child_key)
                if seen is None or seen[0] is not live or seen[1] != name:
                    if seen is not None:
                        self.codec.forget(seen[2])
                    meta = live.get("metadata") or {}
                    view = {**live, "metadata": {**meta, "annotations": {**(meta.get("annotations") or {}),
                                                                          RESOURCE_NAME: name}}}
                    seen = self._views[child_key] = (live, name, view)
                out.append(seen[2])
            else:
                out.append(obj)
        return out

    def _inputs(self, key: Key) -> tuple[RenderInputs, list[tuple[Selector, str]]] | str:
        state = self.world.xrs[key]
        comp = self.compositions.get(key[0])
        if comp is None:
            return f"no Composition for kind {key[0]}"
        reads: list[tuple[Selector, str]] = []
        xr_ns = key[1]

        def fetch(sel: fnv1.ResourceSelector) -> bytes:
            s = Selector.of(sel)
            reads.append((s, xr_ns))
            return self.store.fetch_wire(s, xr_ns)

        inputs = RenderInputs(
            xr=state.obj, composition=comp, functions=self.functions,
            observed=self._observed(key), timeout=self.timeout, strict_namespace=True, fetch=fetch,
            context={NOW_CONTEXT: self.world.now()}, codec=self.codec,
        )
        return inputs, reads

    def _render(self, job: tuple[RenderInputs, list] | str, pool: FunctionPool | None = None) -> RenderOutput | str:
        if isinstance(job, str):
            return job
        try:
            return render(job[0], pool or self.pool)
        except RenderError as err:
            return str(err)

    def _pools(self, kind: str) -> list[FunctionPool]:
        """The pools a wave of ``kind`` spreads its renders over (one function process each)."""
        want = max(1, self.spread.get(kind, 1))
        while len(self._extra_pools) < want - 1:
            self._extra_pools.append(FunctionPool())
        return [self.pool, *self._extra_pools[: want - 1]]

    def close(self) -> None:
        """Stop the extra function processes a spread wave started."""
        _close_all(self._extra_pools)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _apply(self, key: Key, reads: list[tuple[Selector, str]], result: RenderOutput | str) -> None:
        state = self.world.xrs.get(key)
        if state is None:
            return
        self.watches.record(key, reads)
        if isinstance(result, str):
            state.fatal = result
            return
        state.fatal = None
        old_status = state.obj.get("status") or {}
        status = health.restamp(_stamped(result.xr.get("status") or {}, self.world.now()), old_status)
        self._own_render = key
        try:
            self.world.set_status(key, status)
        finally:
            self._own_render = None
        if result.ttl:
            self.due[key] = self.world.clock + max(1, math.ceil(result.ttl))
        else:
            self.due.pop(key, None)
        self._apply_composed(key, result.composed)

    def _ready(self, name: str, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        return name not in self.unready and meta.get("name") not in self.unready

    def _apply_composed(self, key: Key, composed: list[dict]) -> None:
        state = self.world.xrs[key]
        uid = (state.obj.get("metadata") or {}).get("uid", "")
        old = state.composed
        new: dict[str, dict] = {}
        children: list[dict] = []
        for obj in composed:
            meta = obj.setdefault("metadata", {})
            name = (meta.get("annotations") or {}).get(RESOURCE_NAME, "")
            if not meta.get("name"):
                # The API server names generateName objects; do it stably.
                suffix = hashlib.sha256(f"{uid}/{name}".encode()).hexdigest()[:5]
                meta["name"] = meta.pop("generateName", "x-") + suffix
            if is_xr(obj):
                children.append(obj)
                new[name] = obj
                continue
            previous = old.get(name)
            target = _target(obj, key)
            obj.pop("status", None)
            if target:
                self._retarget(key, name, previous, target)
                # The cluster's controllers report on it after its physical model settles.
                status = (previous or {}).get("status") or {}
            else:
                place = health.Place("control-plane", self.world.now(), self.book)
                status = health.composed_status(obj, place, ready=self._ready(name, obj))
                status = health.restamp(status, (previous or {}).get("status"))
            if status:  # a kind without a status (an HTTPRouteFilter) gets none
                obj["status"] = status
            if previous is not None and previous == obj:
                obj = previous  # unchanged: keep the stored object (its protobuf form is cached by identity)
            if target and (previous is None or _without_status(previous) != _without_status(obj)):
                self.physics_dirty.add(target)
            new[name] = obj
        for name, gone in old.items():
            if name not in new:
                if is_xr(gone):
                    self.world.delete(key_of(gone))
                target = _target(gone, key)
                if target:
                    self.targets.get(target, set()).discard((key, name))
                    self.physics_dirty.add(target)
        for name, before in old.items():
            if new.get(name) is not before:
                self.codec.forget(before)
        changed = new != old
        state.composed = new
        if changed and key[0] == CLUSTER_KIND:
            self.physics_dirty.add(key[2])  # a node pool may have come up
        for child in children:
            self.world.apply(_without_status(child), parent=key, copy=False)
        if changed:
            self.mark(key)

    def _retarget(self, key: Key, name: str, previous: dict | None, target: str) -> None:
        before = _target(previous, key) if previous else ""
        if before and before != target:
            self.targets.get(before, set()).discard((key, name))
            self.physics_dirty.add(before)
        self.targets.setdefault(target, set()).add((key, name))

    # ----- the physical clusters --------------------------------------------------------
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

    def _physics(self) -> None:
        while self.physics_dirty:
            cluster = min(self.physics_dirty)
            self.physics_dirty.discard(cluster)
            self._sync(cluster)

    def _sync(self, cluster: str) -> None:
        now = self.world.now()
        members = sorted(self.targets.get(cluster, ()))
        objs: list[tuple[Key, str, dict]] = []
        for owner, name in members:
            state = self.world.xrs.get(owner)
            obj = state.composed.get(name) if state else None
            if obj is not None and _target(obj, owner) == cluster:
                objs.append((owner, name, obj))
        manifests: dict[RemoteKey, dict] = {}
        for _, _, obj in objs:
            if obj.get("kind") == "Object":
                manifests[_remote_key(obj)] = ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest") or {}
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
            remote = _remote_key(obj) if obj.get("kind") == "Object" else None
            signature = (reachable, now, self._ready(name, obj),
                         wc.status(remote, now) if wc is not None and remote and remote[0] in health.WORKLOAD_KINDS
                         else route_targets if remote and remote[0] in ("HTTPRoute", "InferencePool") else None)
            seen = last.get((owner, name))
            if not real and seen is not None and seen[0] is obj and seen[1] == signature:
                synced[(owner, name)] = seen
                continue
            observed = None
            if obj.get("kind") == "Object" and reachable is None:
                manifest = ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest") or {}
                observed = wc.observed(manifest) if real else health.observed_remote(manifest, place)
            status = health.composed_status(obj, place, ready=self._ready(name, obj), unreachable=reachable,
                                            observed=observed, previous=previous)
            if real and obj.get("kind") == "Object" and reachable is None:
                status = wc.judge(obj, status)   # a refused or absent remote object is not Ready
            status = health.restamp(status, previous)
            if status != previous:
                state = self.world.xrs[owner]
                obj = {**_without_status(obj), **({"status": status} if status else {})}
                self.codec.forget(state.composed[name])
                state.composed = {**state.composed, name: obj}
                self.mark(owner)
            synced[(owner, name)] = (obj, signature)

    # ----- the loop -------------------------------------------------------------------------
    def _wave(self, kind: str, executor: ThreadPoolExecutor | None, skip: frozenset[Key] = frozenset()) -> list[Key]:
        """Render ``kind``'s dirty XRs (all of them when not incremental), except ``skip``; the keys rendered."""
        limit = self._limits.get(kind) if self.incremental else None
        if self.incremental:
            keys = [k for k in self.dirty if k[0] == kind and k not in skip]
            if limit:
                keys = keys[:limit]   # the longest waiting; the rest wait for the next round
            keys.sort()
        else:
            keys = [k for k in self.world.ordered() if k[0] == kind]
        for k in keys:
            self.dirty.pop(k, None)
        jobs = [self._inputs(k) for k in keys]
        pools = self._pools(kind)
        spread = [pools[i % len(pools)] for i in range(len(jobs))]
        if executor is not None and len(jobs) > 1:
            # In name order, each as soon as it is back: applying overlaps the renders still running,
            # which were all prepared from the world as the wave began.
            results = executor.map(self._render, jobs, spread)
        else:
            results = (self._render(j, p) for j, p in zip(jobs, spread))
        self.renders += sum(1 for j in jobs if not isinstance(j, str))
        placed = self._placed
        for key, job, result in zip(keys, jobs, results):
            self._apply(key, job[1] if not isinstance(job, str) else [], result)
        self._moved = self._placed != placed
        if limit:
            # A wave that placed or removed no replica cannot have herded: the next may be twice as
            # large; one that did goes back to the batch size.
            self._limits[kind] = limit * 2 if not self._moved else self.batch[kind]
        self._physics()
        return keys

    def _batched(self, kind: str, executor: ThreadPoolExecutor | None) -> None:
        """A batched kind's dirty XRs in bounded waves, each seeing what the last one placed.

        A wave's placements reach the next wave through the clusters' status (the InferenceClusters
        publish the allocations of the ModelReplicas on them), so after a wave that placed or removed
        replicas the dirty InferenceClusters render and the next wave follows in the same round: as a
        control plane whose clusters reconcile faster than new deployments arrive. The rest of the
        fleet (ModelReplicas, endpoints) then renders once for all those waves, not once per wave.
        A wave that moved nothing ends the round's waves (the others wait, with a larger limit);
        each XR renders at most once per round, so a round ends."""
        done = frozenset(self._wave(kind, executor))
        while self._moved and any(k[0] == kind and k not in done for k in self.dirty):
            self._wave(CLUSTER_KIND, executor)
            rendered = self._wave(kind, executor, skip=done)
            if not rendered:
                break
            done |= frozenset(rendered)

    def round(self, executor: ThreadPoolExecutor | None = None) -> None:
        for kind in KIND_ORDER:
            if self.incremental and kind in self.batch:
                self._batched(kind, executor)
            else:
                self._wave(kind, executor)
        self._physics()
        self.rounds += 1
        if self.on_round is not None:
            self.on_round(self, self.rounds)

    def start_functions(self) -> None:
        """Start every function the Compositions name at once, so their start-ups overlap."""
        used = {str((step.get("functionRef") or {}).get("name", ""))
                for comp in self.compositions.values() for step in (comp.get("spec") or {}).get("pipeline") or []}
        wanted = [fn for fn in self.functions if (fn.get("metadata") or {}).get("name") in used]
        try:
            self.pool.start(wanted, time.monotonic() + self.timeout)
        except RenderError:
            pass  # each render reports it against its XR

    def run(self, max_rounds: int = 30) -> Outcome:
        """Reconcile until the fixed point, or give up after ``max_rounds`` more rounds."""
        self.start_functions()
        self._physics()
        executor = ThreadPoolExecutor(self.workers) if self.workers > 1 else None
        start = self.rounds
        try:
            before = self.world.snapshot() if not self.incremental else None
            for n in range(1, max_rounds + 1):
                self.round(executor)
                if self.incremental:
                    if not self.dirty:
                        return Outcome(rounds=n, converged=True, renders=self.renders)
                    continue
                after = self.world.snapshot()
                if after == before:
                    self.dirty.clear()
                    return Outcome(rounds=n, converged=True, renders=self.renders)
                before = after
            changing = sorted(label(k) for k in self.dirty) if self.incremental else sorted(
                k for k in set(before or {}) | set(after) if (before or {}).get(k) != after.get(k))
            return Outcome(rounds=self.rounds - start, converged=False, still_changing=changing, renders=self.renders)
        finally:
            if executor is not None:
                executor.shutdown()


def _close_all(pools: list[FunctionPool]) -> None:
    for pool in pools:
        pool.close()
    pools.clear()


def _status_only(before: dict | None, after: dict | None) -> bool:
    """The change wrote the status alone (``World.set_status`` keeps every other part as it was)."""
    if before is None or after is None or before.keys() != after.keys():
        return False
    return all(before[k] is after[k] or before[k] == after[k] for k in before if k != "status")


def _concerns(deployment: dict, cluster: str, *states: dict | None) -> bool:
    """Whether a change to the status of InferenceCluster ``cluster`` (its ``states`` before and after)
    can change what ModelDeployment ``deployment`` answers.

    A deployment reads every cluster, but once all its replicas are placed and its rollout is done,
    the scheduler only looks again at the clusters it is on: a placement stays while it fits behind
    the replicas admitted before it (on those pools), and failover watches the clusters its replicas
    are on. So such a deployment is not woken by the other clusters (as STATUS_BLIND; the fleet test
    renders it both ways). Anything else (a replica unplaced, a rollout or a drain in progress, a
    deployment not rendered yet) is woken by every cluster."""
    status = deployment.get("status") or {}
    conds = {c.get("type"): c for c in status.get("conditions") or []}
    scheduled, progressing = conds.get("Scheduled") or {}, conds.get("Progressing") or {}
    if (scheduled.get("status") != "True" or progressing.get("reason") != "NewRevisionAvailable"
            or status.get("removals")):
        return True
    if any(p.get("cluster") == cluster for p in status.get("placements") or []):
        return True
    meta = deployment.get("metadata") or {}
    own = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    return any(a.get("deployment") == own
               for obj in states for pool in ((obj or {}).get("status") or {}).get("pools") or []
               for a in pool.get("allocations") or [])


def _without_status(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if k != "status"}


def _ready_pools(composed: dict[str, dict]) -> set[str] | None:
    """Pools whose node pool resource reports Ready; None when the cluster composes none (Existing)."""
    pools = {name.removeprefix("nodepool-"): obj for name, obj in composed.items() if name.startswith("nodepool-")}
    if not pools:
        return None
    return {p for p, obj in pools.items()
            if any(c.get("type") == "Ready" and c.get("status") == "True"
                   for c in (obj.get("status") or {}).get("conditions") or [])}


def simulate_dir(directory: Path, *, unready: set[str] | None = None, max_rounds: int = 100,
                 pool: FunctionPool | None = None, incremental: bool = True) -> tuple[World, Outcome]:
    """Load every manifest under ``directory`` and reconcile to the fixed point."""
    world, outcome, _ = simulate(directory, unready=unready, max_rounds=max_rounds, pool=pool,
                                 incremental=incremental)
    return world, outcome


def load(directory: Path, pool: FunctionPool, **options: Any) -> Simulator:
    """A Simulator of every manifest under ``directory``, nothing reconciled yet."""
    xrs, others = load_dir(directory)
    world = World(others=others)
    for obj in xrs:
        world.apply(obj)
    return Simulator(world, pool, **options)


def simulate(directory: Path, *, unready: set[str] | None = None, max_rounds: int = 100,
             pool: FunctionPool | None = None, incremental: bool = True,
             **options: Any) -> tuple[World, Outcome, Simulator]:
    """``simulate_dir``, also returning the Simulator (its physical clusters, clock, ...)."""
    own = pool is None
    pool = pool or FunctionPool()
    try:
        sim = load(directory, pool, unready=unready, incremental=incremental, **options)
        world = sim.world
        try:
            outcome = sim.run(max_rounds=max_rounds)
        finally:
            sim.close()
    finally:
        if own:
            pool.close()
    return world, outcome, sim


__all__ = ["Outcome", "Simulator", "load", "simulate", "simulate_dir"]
