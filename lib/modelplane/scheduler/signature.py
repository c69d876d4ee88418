"""What the scheduler reads of a cluster whatever the deployment, worked out
once per ``Cluster`` object.

compose-model-deployment hands ``schedule()`` the same ``Cluster`` objects
call after call while a cluster's bytes do not change
(``modelplane.deployment.clusters``), and a placing call walks every one of
them. Most of a cluster's per-call work only depends on things fixed for
the object's life: its pools, each with the other deployments' allocations
replayed in admission order. ``signature(cluster)`` spells those out once,
as plain values, and keeps them as long as the object lives.

A ``PoolSig`` is interned: equal pools of different clusters (same name,
class, node count and allocations) are one object, so per-call memos key
on it by identity (``Matches.pools``) instead of hashing nested tuples for
every cluster. Interning is bounded; when the table is cleared, an equal
pool seen later becomes a new object, which only costs a memo miss.

A deployment's own allocations are never in a signature it uses: the
scheduler takes this path only when ``deployment.key`` is not in
``ClusterSig.deployments`` (a deployment's own kept replicas are replayed
at their own admission keys by ``plan.replay`` instead, and
compose-model-deployment gives clusters a deployment is on a fresh view
each call anyway).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from operator import attrgetter

from .types import Cluster

# ((count, ((device, per pod), ...) sorted by device, gang), ...): one
# allocation's pod groups with their device maps as sorted items, so a pool's
# allocations are a hashable value before any class gives them an order.
RawGroups = tuple[tuple[int, tuple[tuple[str, int], ...], bool], ...]

# Distinct pools remembered for interning (a 10,000-cluster fleet of few
# shapes holds a few hundred).
INTERNED = 50_000


@dataclass(frozen=True, eq=False)
class PoolSig:
    """One pool as every deployment without allocations in it sees it.
    Compared and hashed by identity (interned)."""

    name: str
    class_name: str
    nodes: int
    allocations: tuple[RawGroups, ...]  # sorted by (order, replica), as plan.replay places them


@dataclass(frozen=True, eq=False)
class PoolNames:
    """A cluster's (pool, class) pairs in order: which pools a deployment
    tracks depends on these alone, so a call works that out once per
    distinct ``PoolNames`` (interned, compared by identity)."""

    pairs: tuple[tuple[str, str], ...]


@dataclass(frozen=True, eq=False)
class ClusterSig:
    """A cluster's pools (None while it has not reported them), the
    deployments allocated there, and the class names its pools use (what
    the DeviceMatch filter ORs; a frozenset caches its hash)."""

    pools: tuple[PoolSig, ...] | None
    deployments: frozenset[str]
    classes: frozenset[str]
    unique_names: bool  # no two pools share a name (the fast path needs it)
    names: PoolNames
    plain: bool  # Ready and untainted: filters.quick_pass need not read the cluster


# Shared by the server's worker threads without a lock: each step below is
# one dict operation (atomic under the GIL), and a race only computes a
# signature twice. (A lock taken in a weakref callback could deadlock: the
# callback may run inside any allocation.)
_interned: dict[tuple, PoolSig] = {}
_names: dict[tuple, PoolNames] = {}
_by_id: dict[int, tuple[weakref.ref, ClusterSig]] = {}


class _Ref(weakref.ref):
    """A weak reference that knows its ``_by_id`` key, so forgetting a
    cluster needs no closure per cluster."""

    __slots__ = ("key",)


def _forget(ref: _Ref) -> None:
    # Only this object's entry (the id cannot name a newer object while its
    # callbacks run, but an entry from a racing thread may differ).
    got = _by_id.get(ref.key)
    if got is not None and got[0] is ref:
        _by_id.pop(ref.key, None)


def signature(cluster: Cluster) -> ClusterSig:
    """``cluster``'s signature, computed on first use and kept while the
    object lives."""
    key = id(cluster)
    hit = _by_id.get(key)
    if hit is not None and hit[0]() is cluster:
        return hit[1]
    sig = _build(cluster)
    try:
        ref = _Ref(cluster, _forget)
    except TypeError:  # an object without weak references: computed each call
        return sig
    ref.key = key
    _by_id[key] = (ref, sig)
    return sig


_admission = attrgetter("order", "replica")


def _build(cluster: Cluster) -> ClusterSig:
    if cluster.pools is None:
        return ClusterSig(None, frozenset(), frozenset(), True, _intern_names(()), False)
    pools = []
    deployments: set[str] = set()
    for p in cluster.pools:
        raw: tuple[RawGroups, ...] = ()
        if p.allocations:
            # Stable, as plan._replay_others sorts a pool's allocations.
            allocs = sorted(p.allocations, key=_admission)
            deployments.update([a.deployment for a in allocs])
            raw = tuple([tuple([(g.count, tuple(sorted(g.devices.items())), g.gang) for g in a.pods]) for a in allocs])
        pools.append(_intern(p.name, p.class_name, p.nodes, raw))
    pairs = tuple([(p.name, p.class_name) for p in pools])
    return ClusterSig(tuple(pools), frozenset(deployments), frozenset([c for _, c in pairs]),
                      len({n for n, _ in pairs}) == len(pairs), _intern_names(pairs),
                      cluster.ready and not cluster.taints)


def _intern_names(pairs: tuple[tuple[str, str], ...]) -> PoolNames:
    hit = _names.get(pairs)
    if hit is None:
        if len(_names) >= INTERNED:
            _names.clear()
        hit = _names.setdefault(pairs, PoolNames(pairs))
    return hit


def _intern(name: str, class_name: str, nodes: int, raw: tuple[RawGroups, ...]) -> PoolSig:
    key = (name, class_name, nodes, raw)
    hit = _interned.get(key)
    if hit is None:
        if len(_interned) >= INTERNED:
            _interned.clear()
        hit = _interned.setdefault(key, PoolSig(name, class_name, nodes, raw))
    return hit
