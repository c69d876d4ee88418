"""``schedule()``: keep -> filter -> score -> select -> bind.

Read this function top to bottom against the package docstring; each phase
is one call into its own module. Clusters are walked sorted by name so the
result never depends on the order the API server listed them in.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from . import explain
from .filters import CAPACITY, FilterContext, run_filters
from .keep import EVICT, HOLD, OVERCOMMITTED, dedupe, judge, judge_extra, new_indexes, scale_down
from .matching import DeviceMatcher, Matches, MemberFit
from .plan import (
    ClusterState,
    NoRoom,
    Plan,
    bind,
    empty_state,
    member_placements,
    pod_groups,
    replay,
    try_replica,
)
from .scores import select_key
from .types import (
    HELD,
    KEPT,
    MOVED,
    NEW,
    Cluster,
    Current,
    Deployment,
    Eviction,
    Fleet,
    MemberPlacement,
    Placement,
    Schedule,
    Unplaced,
)


def schedule(
    deployment: Deployment,
    fleet: Fleet,
    current: Sequence[Current] = (),
    *,
    matcher: DeviceMatcher | None = None,
    matches: Matches | None = None,
) -> Schedule:
    """Place ``deployment.replicas`` replicas on ``fleet``, keeping ``current``
    ones where they may stay. ``matcher`` is the CEL seam (default:
    ``modelplane.cel``); ``matches`` lets a caller reuse a match table."""
    matches = matches or Matches(deployment, fleet.classes, matcher)
    clusters = {c.name: c for c in sorted(fleet.clusters, key=lambda c: c.name)}

    # Keep: judge each observed replica, scale down, check the stayers fit.
    regular = [c for c in current if not c.extra]
    unique = dedupe(regular)
    verdicts = [judge(deployment, fleet, matches, c, clusters.get(c.cluster)) for c in unique]
    survivors, dropped = scale_down(verdicts, deployment.replicas)
    firsts = {c.index: c.cluster for c in unique}
    twins = [Eviction(c.index, c.cluster, f"a duplicate of replica {c.index} on {firsts[c.index]}")
             for c in sorted(regular, key=lambda c: (c.index, c.cluster)) if firsts[c.index] != c.cluster]
    extras = [judge_extra(deployment, fleet, c, clusters.get(c.cluster))
              for c in sorted((c for c in current if c.extra), key=lambda c: (c.index, c.cluster))]
    placed: dict[int, Placement] = {}
    leaving: dict[int, tuple[str, str]] = {}
    held_on: dict[str, int] = {}
    staying: dict[str, list[Current]] = {}
    for v in survivors:
        c = v.current
        if v.action == HOLD:
            placed[c.index] = _held(deployment, matches, c, clusters.get(c.cluster), v.reason)
            held_on[c.cluster] = held_on.get(c.cluster, 0) + 1
        elif v.action == EVICT:
            leaving[c.index] = (c.cluster, v.reason)
        else:
            staying.setdefault(c.cluster, []).append(c)
    kept_extras: list[Placement] = []
    evicted_extras: list[Eviction] = []
    extras_on: dict[str, list[Current]] = {}
    for v in extras:
        c = v.current
        if v.action == HOLD:
            kept_extras.append(_as_extra(deployment, c, HELD, v.reason))
        elif v.action == EVICT:
            evicted_extras.append(Eviction(c.index, c.cluster, v.reason))
        else:
            extras_on.setdefault(c.cluster, []).append(c)
    states: dict[str, ClusterState] = {}
    for name in sorted(set(staying) | set(extras_on)):
        state, kept, failed = _keep_on(deployment, matches, fleet, clusters[name], staying.get(name, []),
                                       extras_on.get(name, []))
        states[name] = state
        placed.update(kept)
        for index in failed:
            if index >= 0:
                leaving[index] = (name, OVERCOMMITTED)
        for c in extras_on.get(name, []):
            if -1 - c.index in failed:
                evicted_extras.append(Eviction(c.index, c.cluster, OVERCOMMITTED))
            else:
                kept_extras.append(_as_extra(deployment, c, KEPT))
    # A replica scale-down lets go that had lost its place anyway is evicted.
    evicted_extras += [Eviction(v.current.index, v.current.cluster, v.reason) for v in dropped if v.action == EVICT]
    removed = (*(Eviction(v.current.index, v.current.cluster,
                                f"replaced while its cluster was down (since {v.current.replaced})"
                                if v.current.replaced else f"scaled down to {deployment.replicas}")
                       for v in dropped if v.action != EVICT), *twins)
    evicted = tuple(sorted([*(Eviction(i, c, why) for i, (c, why) in leaving.items()), *evicted_extras],
                           key=lambda e: (e.index, e.cluster)))
    outcome = _Outcome(tuple(sorted(kept_extras, key=lambda p: (p.index, p.cluster))), evicted, removed)
    taken = {v.current.index for v in survivors}
    avoid = _Avoid({c.index for c in current if c.extra}, fleet.terminating)

    wanted = sorted(new_indexes(taken, deployment.replicas, avoid) + list(leaving))
    if not wanted:
        return _result(deployment, placed, [], leaving, outcome)
    if not fleet.clusters_known:
        why = "InferenceClusters not observed yet"
        return _result(deployment, placed, [Unplaced(i, {}, why) for i in wanted], leaving, outcome)

    # Filter: once per cluster; these verdicts do not change as we bind.
    ctx = FilterContext(deployment, fleet, matches)
    rejected: dict[str, tuple[str, str]] = {}
    plans: dict[str, tuple[ClusterState, Plan | NoRoom]] = {}
    for name, cluster in clusters.items():
        verdict = run_filters(ctx, cluster)
        if verdict is not None:
            rejected[name] = verdict
            continue
        state = states.get(name)
        if state is None:
            state = empty_state(cluster, fleet.classes, matches)
            replay(state, deployment.key, ())
        state.own += held_on.get(name, 0)
        plans[name] = (state, try_replica(deployment, state, matches))

    # Score once per cluster; a heap of raw score keys, refreshed for the
    # bound cluster only (stale entries are skipped when they surface).
    keys = {n: select_key(deployment, s, p) for n, (s, p) in plans.items() if isinstance(p, Plan)}
    heap = [(k, n) for n, k in keys.items()]
    heapq.heapify(heap)
    unplaced: list[Unplaced] = []
    # Once no cluster fits, none will: nothing is bound any more, so the
    # reasons are written once, for every replica left.
    nowhere: tuple[dict[str, str], str, bool] | None = None
    for index in wanted:
        while heap and keys.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)
        if not heap:
            if nowhere is None:
                why = dict(rejected)
                why.update({n: (CAPACITY, p.reason()) for n, (_, p) in plans.items() if isinstance(p, NoRoom)})
                nowhere = ({n: r for n, (_, r) in sorted(why.items())}, explain.fit_error(why, len(clusters)),
                           any(f == CAPACITY for f, _ in why.values()))
            unplaced.append(Unplaced(index, dict(nowhere[0]), nowhere[1], nowhere[2]))
            continue
        # Select the best; bind: commit the fill and re-plan only that cluster.
        _, best = heapq.heappop(heap)
        state, plan = plans[best]
        assert isinstance(plan, Plan)
        bind(state, plan)
        replanned = try_replica(deployment, state, matches)
        plans[best] = (state, replanned)
        if isinstance(replanned, Plan):
            keys[best] = select_key(deployment, state, replanned)
            heapq.heappush(heap, (keys[best], best))
        else:
            del keys[best]
        origin = leaving.get(index)
        placed[index] = Placement(
            index=index,
            cluster=best,
            order=deployment.order(index),
            members=plan.members,
            pods=plan.pods,
            state=MOVED if origin else NEW,
            moved_from=origin[0] if origin else None,
            moved_because=origin[1] if origin else None,
        )
    return _result(deployment, placed, unplaced, leaving, outcome)


def _keep_on(
    deployment: Deployment, matches: Matches, fleet: Fleet, cluster: Cluster, stay: list[Current],
    extras: list[Current] = (),  # type: ignore[assignment]
) -> tuple[ClusterState, dict[int, Placement], set[int]]:
    """Replay ``cluster`` with the stayers and extras at their own admission
    keys (extras with their observed pods). Returns the fill, the kept
    placements, and the failed indexes (extras as ``-1 - index``)."""
    pools = {p.name: p for p in cluster.pools or ()}
    own = []
    resolved: dict[int, tuple[MemberFit, ...]] = {}
    for c in stay:
        fits = tuple(matches.fit(pools[p].class_name, i) for i, p in enumerate(c.pools))
        resolved[c.index] = fits  # type: ignore[assignment]  # judge() proved every fit
        own.append((c.order or deployment.order(c.index), c.index, pod_groups(deployment, c.pools, fits)))  # type: ignore[arg-type]
    extra = [(c.order or deployment.order(c.index), c.index, c.pods) for c in extras]
    used = {p for c in stay for p in c.pools} | {pp.pool for c in extras for pp in c.pods}
    state = empty_state(cluster, fleet.classes, matches, used)
    failed = replay(state, deployment.key, own, extra)
    kept = {
        c.index: Placement(
            index=c.index,
            cluster=cluster.name,
            order=order,
            members=member_placements(deployment, c.pools, resolved[c.index]),
            pods=pods,
            state=KEPT,
        )
        for c, (order, _, pods) in zip(stay, own)
        if c.index not in failed
    }
    return state, kept, failed


def _as_extra(deployment: Deployment, c: Current, state: str, why: str | None = None) -> Placement:
    """An extra replica as reported: where it is and what it holds."""
    return Placement(index=c.index, cluster=c.cluster, order=c.order or deployment.order(c.index), pods=c.pods,
                     state=state, held_because=why)


class _Avoid:
    """Indexes a new replica must not take: extras' and terminating ones
    (the latter may be lazy and is asked only when needed)."""

    def __init__(self, extras: set[int], terminating) -> None:
        self.extras = extras
        self.terminating = terminating

    def __contains__(self, index: object) -> bool:
        return index in self.extras or index in self.terminating


@dataclass(frozen=True)
class _Outcome:
    extras: tuple[Placement, ...]
    evicted: tuple[Eviction, ...]
    removed: tuple[Eviction, ...]


def _held(deployment: Deployment, matches: Matches, c: Current, cluster: Cluster | None, why: str) -> Placement:
    """A replica we cannot judge yet: echo what is known; the caller keeps the
    observed ModelReplica as it is."""
    classes = {p.name: p.class_name for p in (cluster.pools or ())} if cluster else {}
    members = []
    fits = []
    for i, ((engine, member), pool) in enumerate(zip(deployment.members(), c.pools)):
        fit = matches.fit(classes[pool], i) if pool in classes else None
        members.append(
            MemberPlacement(engine.name, member.role, pool, fit.devices if isinstance(fit, MemberFit) else ())
        )
        fits.append(fit)
    complete = len(fits) == len(deployment.members()) and all(isinstance(f, MemberFit) for f in fits)
    return Placement(
        index=c.index,
        cluster=c.cluster,
        order=c.order or deployment.order(c.index),
        members=tuple(members),
        pods=pod_groups(deployment, c.pools, fits) if complete else (),  # type: ignore[arg-type]
        state=HELD,
        held_because=why,
    )


def _result(
    deployment: Deployment,
    placed: dict[int, Placement],
    unplaced: list[Unplaced],
    leaving: dict[int, tuple[str, str]],
    outcome: _Outcome,
) -> Schedule:
    placements = tuple(placed[i] for i in sorted(placed))
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
        origin = leaving.get(u.index)
        text = f"left {origin[0]} ({origin[1]}); {u.message}" if origin else u.message
        groups.setdefault(text, []).append(u.index)
    for text, idx in groups.items():
        parts.append(f"{explain.indexes(idx)}: {text}")
    # A replica re-placed on the cluster it left (another pool there) keeps
    # its name: it is updated in place, not evicted.
    here = {(p.index, p.cluster) for p in placements}
    evicted = tuple(e for e in outcome.evicted if (e.index, e.cluster) not in here)
    return Schedule(placements=placements, unplaced=tuple(unplaced), message="; ".join(parts),
                    extras=outcome.extras, evicted=evicted, removed=outcome.removed)
