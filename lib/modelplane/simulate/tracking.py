"""Which XRs must render again: the dirty set, the TTLs that fall due, and who reads what.

An XR is dirty when something its render read has changed since its last
render: its own spec or metadata, or a status it did not write itself (no
Modelplane function's answer depends on its XR's own status: a function
reads it only to keep it while its inputs are not fetched yet, a call whose
answer the requirements loop replaces;
``tests/simulate/test_fleet.py::test_no_render_depends_on_its_own_xrs_status``
renders every XR of the example fleet with other statuses); an observed
composed resource or composed XR; a required resource its selectors return
(``store.Watches``); or the TTL its functions asked for has passed on the
simulated clock.

``Changes`` hears every change to an XR (``heard``, from the loop's world
listener), keeps the read side current (``store.Store``: what required-resource
selectors are answered from) and marks the XRs the change concerns. Two
kinds of status change wake fewer readers than the selectors match:
``STATUS_BLIND`` readers never read the status of what they select, a
ModelDeployment that is fully placed reads only the clusters it is on
(``_concerns``), and one with no replica leaving does not read the routes a
ModelService reports (``_drains``: at 1,000 clusters a third of the
deployments' renders were for those).
"""
from __future__ import annotations

import math

from modelplane.simulate.store import Selector, Store, Watches
from modelplane.simulate.world import (
    CLUSTER_KIND,
    DEPLOYMENT_KIND,
    REPLICA_KIND,
    SERVICE_KIND,
    Key,
    World,
    XRState,
    key_of,
)

# kind -> kinds of the XRs that require it but never read its status: a change to its status alone
# does not wake them. compose-inference-cluster publishes allocations from the ModelReplicas'
# spec.placement (platform/pools.py), and a replica's status changes several times as it comes up
# (tests/simulate/test_fleet.py::test_status_blind_readers_render_the_same_whatever_the_status_of_what_they_read
# renders a cluster both ways).
STATUS_BLIND = {REPLICA_KIND: frozenset({CLUSTER_KIND})}


class Changes:
    """The dirty XRs, oldest first; when each asked to be reconciled again; the read side they render from."""

    def __init__(self, world: World):
        self.world = world
        self.store = Store()
        self.watches = Watches()
        # Dirty XRs, oldest first (a dict keeps the order keys were marked in).
        self.dirty: dict[Key, None] = dict.fromkeys(world.ordered())
        self.due: dict[Key, int] = {}                         # XR -> clock second its TTL passes
        self.placed = 0                                       # ModelReplicas created or deleted so far
        # The XR whose own render's status is being written: that write does not make it dirty.
        self._own_render: Key | None = None
        for key, state in world.xrs.items():
            self.store.put(key, state.obj)
        for obj in world.others:
            self.store.put(key_of(obj), obj)

    def mark(self, key: Key | None) -> None:
        if key is not None and key in self.world.xrs:
            self.dirty.setdefault(key)

    def heard(self, key: Key, before: dict | None, after: dict | None, parent: Key | None) -> None:
        """XR ``key`` changed (None before: created; None after: deleted): wake whoever read it."""
        if (before is None or after is None) and key[0] == REPLICA_KIND:
            self.placed += 1
        if after is None:
            self.store.remove(key, before or {})
        else:
            self.store.put(key, after)
        status_only = _status_only(before, after)
        if not (status_only and key == self._own_render):
            self.mark(key)
        self.mark(parent)
        blind = STATUS_BLIND.get(key[0], frozenset()) if status_only else frozenset()
        # A selector reads labels, names and namespaces, never a status: after a change to the status
        # alone, the readers of the object before are its readers after.
        readers = self.watches.readers(after, blind=blind) if status_only else self.watches.readers(
            before, after, blind=blind)
        # once per change, not once per reading deployment
        allocated = _allocated(before, after) if status_only and key[0] == CLUSTER_KIND else None
        routes = status_only and key[0] == SERVICE_KIND
        for reader_key in readers:
            if (allocated is not None or routes) and reader_key[0] == DEPLOYMENT_KIND:
                state = self.world.xrs.get(reader_key)
                if state is not None and (not _concerns(state.obj, key[2], allocated) if allocated is not None
                                          else not _drains(state)):
                    continue
            self.mark(reader_key)
        if after is None:
            self.watches.forget(key)
            self.due.pop(key, None)
            self.dirty.pop(key, None)

    def take(self, kind: str, limit: int | None = None, skip: frozenset[Key] = frozenset()) -> list[Key]:
        """``kind``'s dirty XRs but ``skip``, at most ``limit`` (the longest waiting), in name order: clean now."""
        keys = [k for k in self.dirty if k[0] == kind and k not in skip]
        if limit:
            keys = keys[:limit]   # the longest waiting; the rest wait for the next round
        keys.sort()
        self.clean(keys)
        return keys

    def clean(self, keys: list[Key]) -> None:
        for k in keys:
            self.dirty.pop(k, None)

    def waiting(self, kind: str, skip: frozenset[Key] = frozenset()) -> bool:
        """Whether any XR of ``kind`` but ``skip`` is dirty."""
        return any(k[0] == kind and k not in skip for k in self.dirty)

    def read(self, key: Key, reads: list[tuple[Selector, str]]) -> None:
        """``key``'s render required what ``reads`` select (namespace of the XR): a change to it wakes ``key``."""
        self.watches.record(key, reads)

    def write_own_status(self, key: Key, status: dict) -> None:
        """Write the status ``key``'s own render produced: that write does not make it dirty."""
        self._own_render = key
        try:
            self.world.set_status(key, status)
        finally:
            self._own_render = None

    def recall(self, key: Key, ttl: float | None) -> None:
        """``key`` asked to be reconciled again in ``ttl`` seconds (none: only when something changes)."""
        if ttl:
            self.due[key] = self.world.clock + max(1, math.ceil(ttl))
        else:
            self.due.pop(key, None)

    def next_due(self) -> int | None:
        """The clock second at which the next XR asked to be reconciled again (its response TTL)."""
        return min(self.due.values(), default=None)

    def expire(self) -> None:
        """XRs whose TTL passed on the world's clock are dirty again."""
        for key, due in list(self.due.items()):
            if due <= self.world.clock:
                self.mark(key)
                del self.due[key]

    def add_other(self, obj: dict) -> None:
        """Create or replace an object that is not an XR (a Secret): functions may require it."""
        key = key_of(obj)
        self.world.others = [o for o in self.world.others if key_of(o) != key] + [obj]
        before = self.store.get(key)
        self.store.put(key, obj)
        for reader_key in self.watches.readers(before, obj):
            self.mark(reader_key)


def _status_only(before: dict | None, after: dict | None) -> bool:
    """The change wrote the status alone (``World.set_status`` keeps every other part as it was),
    the first status too (an XR is created without one)."""
    if before is None or after is None or before.keys() - {"status"} != after.keys() - {"status"}:
        return False
    return all(before[k] is after[k] or before[k] == after[k] for k in before if k != "status")


def _allocated(*states: dict | None) -> frozenset[str]:
    """``namespace/name`` of every deployment allocated on an InferenceCluster in any of its ``states``."""
    return frozenset(a.get("deployment") for obj in states for pool in ((obj or {}).get("status") or {}).get("pools") or []
                     for a in pool.get("allocations") or [])


def _drains(deployment: XRState) -> bool:
    """Whether a change to a ModelService's status (the routes it reports) can change what
    ModelDeployment ``deployment`` answers.

    A deployment reads the routes only to drain: a replica that leaves waits out of routing until
    no route names it. Which replicas leave does not depend on the routes, so a deployment whose
    last answer had no removals has none to drain (as STATUS_BLIND;
    tests/simulate/test_fleet.py::test_a_deployment_with_nothing_leaving_renders_the_same_whatever_the_routes
    renders it both ways). One not answered yet, or whose last render failed, is woken."""
    status = deployment.obj.get("status")
    return deployment.fatal is not None or not status or bool(status.get("removals"))


def _concerns(deployment: dict, cluster: str, allocated: frozenset[str]) -> bool:
    """Whether a change to the status of InferenceCluster ``cluster`` (``allocated``: the deployments
    allocated on it before or after) can change what ModelDeployment ``deployment`` answers.

    A deployment reads every cluster, but once all its replicas are placed and its rollout is done,
    the scheduler only looks again at the clusters it is on: a placement stays while it fits behind
    the replicas admitted before it (on those pools), and failover watches the clusters its replicas
    are on. So such a deployment is not woken by the other clusters (as STATUS_BLIND;
    tests/simulate/test_fleet.py::test_a_placed_deployment_renders_the_same_whatever_the_clusters_it_is_not_on_report
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
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}" in allocated
