"""``schedule()``: keep -> filter -> score -> bind -> result.

Read ``schedule()`` top to bottom against the package docstring; each phase
is one call:

- keep: ``keep.keep`` judges the observed replicas, scales down, and
  returns ``Kept``: what stays, what leaves, which indexes to place.
- filter: ``_filter`` runs ``filters.run_filters`` once per cluster,
  plans one more replica (``plan.try_replica``) on each that passes and
  scores (``scores.select_key``) each with room.
- score: ``scores.Ranking`` orders the clusters with room, best first.
- bind: ``_bind`` gives each wanted index the best cluster, binds there
  (``plan.bind``), and re-plans and re-scores only that cluster.
- result: ``_result`` assembles the ``Schedule`` and its message.

Clusters are walked sorted by name so the result never depends on the
order the API server listed them in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from . import explain
from .filters import CAPACITY, FilterContext, quick_pass, run_filters
from .keep import Kept, keep
from .matching import DeviceMatcher, Matches
from .plan import ClusterState, NoRoom, Plan, bind, empty_state, quick_state, replay, try_replica
from .scores import Ranking, select_key
from .signature import signature
from .types import (
    HELD,
    MOVED,
    NEW,
    Cluster,
    Current,
    Deployment,
    Eviction,
    Fleet,
    Placement,
    Schedule,
    Unplaced,
)

CLUSTERS_NOT_OBSERVED = "InferenceClusters not observed yet"


def schedule(
    deployment: Deployment,
    fleet: Fleet,
    current: Sequence[Current] = (),
    *,
    matcher: DeviceMatcher | None = None,
    matches: Matches | None = None,
) -> Schedule:
    """Place ``deployment.replicas`` replicas on ``fleet``, keeping ``current``
    ones where they may stay.

    Args:
        deployment: The deployment to place.
        fleet: The clusters and classes it can see.
        current: Its replicas as observed, extras included.
        matcher: The CEL seam (default: ``modelplane.cel``).
        matches: A match table to reuse; built with ``matcher`` when None.

    Returns:
        Where each replica goes, which could not be placed and why, and
        which observed replicas are evicted or removed.
    """
    matches = matches or Matches(deployment, fleet.classes, matcher)
    # By name; with two clusters of one name the last listed wins, as a
    # stable sort would also leave it. Only ``_filter`` walks them, sorted:
    # a steady call (nothing to place) just looks names up.
    clusters = {c.name: c for c in fleet.clusters}
    kept = keep(deployment, fleet, matches, clusters, current)
    if not kept.wanted:
        return _result(deployment, kept, {}, [])
    if not fleet.clusters_known:
        return _result(deployment, kept, {}, [Unplaced(i, {}, CLUSTERS_NOT_OBSERVED) for i in kept.wanted])
    filtered = _filter(deployment, fleet, matches, clusters, kept)
    ranking = Ranking(deployment, filtered.keys)
    bound, unplaced = _bind(deployment, matches, kept, filtered, ranking)
    return _result(deployment, kept, bound, unplaced)


@dataclass(frozen=True)
class _Nowhere:
    """Why no cluster takes a replica. Once none fits, none will (nothing is
    bound any more), so it is worked out once for every replica left."""

    reasons: dict[str, str]  # cluster name -> one short reason
    message: str
    capacity: bool  # some cluster passed every filter but had no room

    def unplaced(self, index: int) -> Unplaced:
        return Unplaced(index, dict(self.reasons), self.message, self.capacity)


@dataclass(frozen=True)
class _Filtered:
    """The filter phase's verdicts, which do not change as replicas are bound.

    Attributes:
        rejected: Per cluster a filter rejected: (filter NAME, reason).
        plans: Per cluster that passed: where one more replica would go, or
            why none fits. The bind phase re-plans the cluster it binds to.
        keys: Per cluster with room: its ``scores.select_key``.
        states: The fills kept for binding: the keep phase's, those built
            the plain way, and those bound to. A cluster filled from its
            signature (``plan.quick_state``) is not kept: most are never
            bound to, and ten thousand fills kept to the end of a call are
            what the garbage collector then walks. ``state`` rebuilds one.
        total: How many clusters the fleet lists.
    """

    rejected: dict[str, tuple[str, str]]
    plans: dict[str, Plan | NoRoom]
    keys: dict[str, tuple[float, ...]]
    states: dict[str, ClusterState]
    total: int
    deployment: Deployment
    fleet: Fleet
    matches: Matches
    clusters: Mapping[str, Cluster]
    held: Mapping[str, int]

    def state(self, name: str) -> ClusterState:
        """Cluster ``name``'s fill, as the filter phase planned on it."""
        state = self.states.get(name)
        if state is None:
            cluster = self.clusters[name]
            state = quick_state(cluster, signature(cluster), self.fleet.classes, self.matches, self.deployment.key)
            assert state is not None, "a fill not kept was built from the signature"
            state.own += self.held.get(name, 0)
            self.states[name] = state
        return state

    def nowhere(self) -> _Nowhere:
        """Why no cluster takes a replica now: rejected, or out of room."""
        why = dict(self.rejected)
        why.update({n: (CAPACITY, p.reason()) for n, p in self.plans.items() if isinstance(p, NoRoom)})
        return _Nowhere(
            reasons={n: r for n, (_, r) in sorted(why.items())},
            message=explain.fit_error(why, self.total),
            capacity=any(f == CAPACITY for f, _ in why.values()),
        )


def _filter(
    deployment: Deployment, fleet: Fleet, matches: Matches, clusters: Mapping[str, Cluster], kept: Kept
) -> _Filtered:
    """Run the filters once per cluster, plan one more replica on each
    cluster that passes them all, and score those with room.

    This loop runs for every cluster of the fleet on every placing call, so
    the common case is spelled out inline: a cluster that passes
    ``quick_pass`` and where nothing of this deployment stays gets its fill
    from its signature (``plan.quick_state``), scored while at hand."""
    ctx = FilterContext(deployment, fleet, matches)
    rejected: dict[str, tuple[str, str]] = {}
    plans: dict[str, Plan | NoRoom] = {}
    keys: dict[str, tuple[float, ...]] = {}
    states: dict[str, ClusterState] = {}
    key, classes, stays, held = deployment.key, fleet.classes, kept.fills, kept.held_on
    for name in sorted(clusters):
        cluster = clusters[name]
        sig = signature(cluster)
        if not quick_pass(ctx, cluster, sig):
            verdict = run_filters(ctx, cluster)
            if verdict is not None:
                rejected[name] = verdict
                continue
        state = None if name in stays else quick_state(cluster, sig, classes, matches, key)
        if state is None:
            state = states[name] = _fill(deployment, fleet, matches, cluster, kept)
        elif name in held:
            state.own += held[name]
        plan = plans[name] = try_replica(deployment, state, matches)
        if isinstance(plan, Plan):
            keys[name] = select_key(deployment, state, plan)
    return _Filtered(rejected, plans, keys, states, len(clusters), deployment, fleet, matches, clusters, held)


def _fill(
    deployment: Deployment, fleet: Fleet, matches: Matches, cluster: Cluster, kept: Kept
) -> ClusterState:
    """``cluster``'s fill: the keep phase's where replicas stay, else other
    deployments' allocations alone. Replicas held there count for spread."""
    state = kept.fills.get(cluster.name)
    if state is None:
        state = empty_state(cluster, fleet.classes, matches)
        replay(state, deployment.key, ())
    state.own += kept.held_on.get(cluster.name, 0)
    return state


def _bind(
    deployment: Deployment, matches: Matches, kept: Kept, filtered: _Filtered, ranking: Ranking
) -> tuple[dict[int, Placement], list[Unplaced]]:
    """Bind each wanted index, lowest first, to the best cluster with room.

    Returns:
        The bound replicas by index, and those no cluster could take.
    """
    bound: dict[int, Placement] = {}
    unplaced: list[Unplaced] = []
    nowhere: _Nowhere | None = None
    for index in kept.wanted:
        best = ranking.pop_best()
        if best is None:
            if nowhere is None:
                nowhere = filtered.nowhere()
            unplaced.append(nowhere.unplaced(index))
            continue
        plan = _bind_to(deployment, matches, filtered, ranking, best)
        bound[index] = _placement(deployment, index, best, plan, kept.leaving.get(index))
    return bound, unplaced


def _bind_to(
    deployment: Deployment, matches: Matches, filtered: _Filtered, ranking: Ranking, name: str
) -> Plan:
    """Commit the replica planned on cluster ``name`` to its fill, then
    re-plan and re-score that cluster only: no other fill changed.

    Returns:
        The plan that was bound.
    """
    plan = filtered.plans[name]
    assert isinstance(plan, Plan), "only clusters with room are ranked"
    state = filtered.state(name)
    bind(state, plan)
    replanned = filtered.plans[name] = try_replica(deployment, state, matches)
    ranking.rescore(name, state, replanned)
    return plan


def _placement(
    deployment: Deployment, index: int, cluster: str, plan: Plan, left: Eviction | None
) -> Placement:
    """Replica ``index`` bound to ``cluster``: NEW, or MOVED when it ``left``
    another place."""
    return Placement(
        index=index,
        cluster=cluster,
        order=deployment.order(index),
        members=plan.members,
        pods=plan.pods,
        state=NEW if left is None else MOVED,
        moved_from=None if left is None else left.cluster,
        moved_because=None if left is None else left.reason,
    )


def _result(
    deployment: Deployment, kept: Kept, bound: Mapping[int, Placement], unplaced: list[Unplaced]
) -> Schedule:
    """The ``Schedule``: kept and bound replicas by index, and the message."""
    placed = {**kept.placed, **bound}
    placements = tuple(placed[i] for i in sorted(placed))
    # A replica re-placed on the cluster it left (another pool there) keeps
    # its name: it is updated in place, not evicted.
    here = {(p.index, p.cluster) for p in placements}
    evicted = tuple(e for e in kept.evicted if (e.index, e.cluster) not in here)
    return Schedule(placements=placements, unplaced=tuple(unplaced),
                    message=_message(deployment, placements, unplaced, kept.leaving),
                    extras=kept.extras, evicted=evicted, removed=kept.removed)


def _message(
    deployment: Deployment,
    placements: Sequence[Placement],
    unplaced: Sequence[Unplaced],
    leaving: Mapping[int, Eviction],
) -> str:
    """One line: how many are placed, then the held, moved and unplaced ones."""
    parts = [f"{len(placements)}/{deployment.replicas} replicas placed"]
    held: dict[str, list[Placement]] = {}
    for p in placements:
        if p.state == HELD:
            held.setdefault(p.held_because or "", []).append(p)
    for why, group in sorted(held.items()):
        where = ", ".join(sorted({p.cluster for p in group}))
        parts.append(f"{explain.indexes([p.index for p in group])} held on {where} ({why})")
    for p in placements:
        if p.state == MOVED:
            parts.append(f"replica {p.index} moved from {p.moved_from} to {p.cluster}: {p.moved_because}")
    groups: dict[str, list[int]] = {}
    for u in unplaced:
        left = leaving.get(u.index)
        text = u.message if left is None else f"left {left.cluster} ({left.reason}); {u.message}"
        groups.setdefault(text, []).append(u.index)
    for text, idx in groups.items():
        parts.append(f"{explain.indexes(idx)}: {text}")
    return "; ".join(parts)
