"""One XR reconciled: the inputs its Composition's functions get, and their result applied.

``Reconciler.inputs`` gathers what a render of one XR reads: the XR, its
Composition, the composed resources as Crossplane observes them (``observed``),
required resources answered from the ``Store`` (each read recorded, so a change
to it wakes the XR) and the simulated clock in the pipeline context. ``render``
runs the real functions over gRPC (``modelplane.render``, engine-mode namespace
lookups); ``apply`` writes the result as the API server and the controllers
would:

- the XR's status becomes what its functions wrote (condition times move
  only on a transition, at the simulated clock);
- composed XRs (ModelReplica, ModelEndpoint) are applied as XRs in their own
  right; ones no longer desired are deleted with everything they composed;
- other composed resources get their controllers' status: at once on the
  control plane, after its physical model settles on a workload cluster
  (``sync``).

A FATAL result leaves the XR's children as they were and is shown in its
conditions, as Crossplane would show a ReconcileError.
"""
from __future__ import annotations

import hashlib
import time

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.pipeline.composition import NOW_CONTEXT_KEY
from modelplane.render import FunctionPool, RenderError, RenderInputs, RenderOutput, render
from modelplane.render.finish import ANNOTATION_RESOURCE_NAME
from modelplane.simulate import health
from modelplane.simulate.codec import CachingCodec
from modelplane.simulate.store import Selector
from modelplane.simulate.sync import ClusterSync, target
from modelplane.simulate.tracking import Changes
from modelplane.simulate.world import CLUSTER_KIND, Key, World, key_of, without_status
from modelplane.validate.admission import is_xr

# A render that failed for another reason than a function's fatal result is retried this often.
RETRIES = 3
FATAL_RESULT = "returned a fatal result"

# What a wave renders: an XR's inputs and the selectors its render read, or why it cannot render.
Job = tuple[RenderInputs, list[tuple[Selector, str]]] | str


class Reconciler:
    """Renders one XR through its Composition and applies the result to the world."""

    def __init__(self, world: World, changes: Changes, clusters: ClusterSync, codec: CachingCodec, *,
                 compositions: dict[str, dict], functions: list[dict], timeout: float):
        self.world = world
        self.changes = changes
        self.clusters = clusters
        self.codec = codec
        self.compositions = compositions
        self.functions = functions
        self.timeout = timeout
        # child XR -> (its live object, resource name, the view its parent observes)
        self._views: dict[Key, tuple[dict, str, dict]] = {}
        self._retries: dict[Key, int] = {}   # XR -> renders that failed in a row (not a function's fatal)

    def start(self, pool: FunctionPool) -> None:
        """Start every function the Compositions name at once, so their start-ups overlap."""
        used = {str((step.get("functionRef") or {}).get("name", ""))
                for comp in self.compositions.values() for step in (comp.get("spec") or {}).get("pipeline") or []}
        wanted = [fn for fn in self.functions if (fn.get("metadata") or {}).get("name") in used]
        try:
            pool.start(wanted, time.monotonic() + self.timeout)
        except RenderError:
            pass  # each render reports it against its XR

    def forget(self, key: Key, before: dict | None, after: dict | None) -> None:
        """XR ``key`` changed: the protobuf forms cached of what it was (and of its parent's view of it) go."""
        if before is not None:
            self.codec.forget(before)
        if after is None:
            view = self._views.pop(key, None)
            if view is not None:
                self.codec.forget(view[2])

    # ----- render -------------------------------------------------------------------
    def observed(self, key: Key) -> list[dict]:
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
                                                                          ANNOTATION_RESOURCE_NAME: name}}}
                    seen = self._views[child_key] = (live, name, view)
                out.append(seen[2])
            else:
                out.append(obj)
        return out

    def inputs(self, key: Key) -> Job:
        state = self.world.xrs[key]
        comp = self.compositions.get(key[0])
        if comp is None:
            return f"no Composition for kind {key[0]}"
        reads: list[tuple[Selector, str]] = []
        xr_ns = key[1]
        store = self.changes.store

        def fetch(sel: fnv1.ResourceSelector) -> bytes:
            s = Selector.of(sel)
            reads.append((s, xr_ns))
            return store.fetch_wire(s, xr_ns)

        inputs = RenderInputs(
            xr=state.obj, composition=comp, functions=self.functions,
            observed=self.observed(key), timeout=self.timeout, strict_namespace=True, fetch=fetch,
            context={NOW_CONTEXT_KEY: self.world.now()}, codec=self.codec,
        )
        return inputs, reads

    @staticmethod
    def render(job: Job, pool: FunctionPool) -> RenderOutput | str:
        if isinstance(job, str):
            return job
        try:
            return render(job[0], pool)
        except RenderError as err:
            return str(err)

    # ----- apply --------------------------------------------------------------------
    def apply(self, key: Key, reads: list[tuple[Selector, str]], result: RenderOutput | str) -> None:
        state = self.world.xrs.get(key)
        if state is None:
            return
        self.changes.read(key, reads)
        if isinstance(result, str):
            state.fatal = result
            # A render that failed on its way (a function process slow to start or answer on a busy
            # machine) is tried again next round, as Crossplane requeues; a function's own fatal
            # result is an answer, not a failure. Never more than RETRIES in a row.
            if FATAL_RESULT not in result and self._retries.get(key, 0) < RETRIES:
                self._retries[key] = self._retries.get(key, 0) + 1
                self.changes.mark(key)
            return
        self._retries.pop(key, None)
        state.fatal = None
        old_status = state.obj.get("status") or {}
        status = health.restamp(_stamped(result.xr.get("status") or {}, self.world.now()), old_status)
        self.changes.write_own_status(key, status)
        self.changes.recall(key, result.ttl)
        self._apply_composed(key, result.composed)

    def _apply_composed(self, key: Key, composed: list[dict]) -> None:
        state = self.world.xrs[key]
        uid = (state.obj.get("metadata") or {}).get("uid", "")
        old = state.composed
        new: dict[str, dict] = {}
        children: list[dict] = []
        clusters = self.clusters
        for obj in composed:
            meta = obj.setdefault("metadata", {})
            name = (meta.get("annotations") or {}).get(ANNOTATION_RESOURCE_NAME, "")
            if not meta.get("name"):
                # The API server names generateName objects; do it stably.
                suffix = hashlib.sha256(f"{uid}/{name}".encode()).hexdigest()[:5]
                meta["name"] = meta.pop("generateName", "x-") + suffix
            if is_xr(obj):
                children.append(obj)
                new[name] = obj
                continue
            previous = old.get(name)
            cluster = target(obj, key)
            obj.pop("status", None)
            if cluster:
                clusters.retarget(key, name, previous, cluster)
                # The cluster's controllers report on it after its physical model settles.
                status = (previous or {}).get("status") or {}
            else:
                status = clusters.control_plane_status(name, obj, (previous or {}).get("status"))
            if status:  # a kind without a status (an HTTPRouteFilter) gets none
                obj["status"] = status
            if previous is not None and previous == obj:
                obj = previous  # unchanged: keep the stored object (its protobuf form is cached by identity)
            if cluster and (previous is None or without_status(previous) != without_status(obj)):
                clusters.stale.add(cluster)
            new[name] = obj
        for name, gone in old.items():
            if name not in new:
                if is_xr(gone):
                    self.world.delete(key_of(gone))
                clusters.release(key, name, gone)
        for name, before in old.items():
            if new.get(name) is not before:
                self.codec.forget(before)
        changed = new != old
        state.composed = new
        if changed and key[0] == CLUSTER_KIND:
            clusters.stale.add(key[2])  # a node pool may have come up
        for child in children:
            self.world.apply(without_status(child), parent=key, copy=False)
        if changed:
            self.changes.mark(key)


def _stamped(status: dict, now: str) -> dict:
    """Render writes one fixed time on every condition; a new condition happens now."""
    for cond in status.get("conditions") or []:
        cond["lastTransitionTime"] = now
    return status
