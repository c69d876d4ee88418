"""One cluster's fill, and where a replica's members would go in it.

``ClusterState`` is a cluster's pools with their nodes filled by every
allocation that fits in admission order (``capacity.py``), this
deployment's own kept replicas included at their own admission key; its
``replay`` reports which of those own replicas no longer fit behind earlier
ones, so the keep phase can move them.

``plan_replica`` places one more replica tentatively. Members are taken in
engine then member order; each picks, among the cluster's pools whose class
fits it, the one that fits most tightly: fewest spare devices left on the
nodes the replica uses (so a 1-GPU pod takes the 1-GPU node, not a slice of
an 8-GPU one), ties by pool name. All engines of a replica share the
cluster (a PrefillDecode pair is never split); their pools may differ.

A replica's consumption is written as pod groups (``spec.placement``): a
non-gang member is one group of ``pods x copies`` pods; a gang engine is
one group per copy per (pool, per-pod devices), gang=true, so the Leader and
Workers of one copy land on distinct nodes. Feasibility is always decided
by placing exactly these groups with ``place_groups``, the same routine
that replays allocations, so a replica that fits when bound also fits when
replayed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .capacity import PoolFill, place_groups
from .matching import Matches, MemberFit
from .types import (
    Cluster,
    Deployment,
    InferenceClass,
    MemberPlacement,
    PodGroup,
    PoolPlacement,
)


@dataclass(frozen=True)
class Plan:
    """A tentative placement of one replica on one cluster."""

    members: tuple[MemberPlacement, ...]
    pods: tuple[PoolPlacement, ...]
    free_after: int  # free DRA devices left in the pools it uses (packing)
    fills: dict[str, PoolFill] = field(compare=False, repr=False)


@dataclass
class ClusterState:
    cluster: Cluster
    fills: dict[str, PoolFill]
    own: int = 0  # replicas of this deployment here (spread)


def pod_groups(deployment: Deployment, pools: Sequence[str], fits: Sequence[MemberFit]) -> tuple[PoolPlacement, ...]:
    """The pod groups of the first ``len(pools)`` members, by pool name."""
    by_pool: dict[str, list[PodGroup]] = {}
    k = 0
    for engine in deployment.engines:
        if k >= len(pools):
            break
        taken = list(zip(engine.members, pools[k:], fits[k:]))
        k += len(engine.members)
        if engine.gang:
            for _ in range(engine.copies):
                gang: dict[tuple[str, tuple[tuple[str, int], ...]], int] = {}
                for member, pool, fit in taken:
                    key = (pool, fit.demand)
                    gang[key] = gang.get(key, 0) + member.pods
                for (pool, demand), count in gang.items():
                    by_pool.setdefault(pool, []).append(PodGroup(count, dict(demand), True))
            continue
        for member, pool, fit in taken:
            groups = by_pool.setdefault(pool, [])
            demand = dict(fit.demand)
            count = member.pods * engine.copies
            # Identical plain pods in one pool are one group.
            for j, g in enumerate(groups):
                if not g.gang and g.devices == demand:
                    groups[j] = PodGroup(g.count + count, demand, False)
                    break
            else:
                groups.append(PodGroup(count, demand, False))
    return tuple(PoolPlacement(p, tuple(by_pool[p])) for p in sorted(by_pool))


def member_placements(deployment: Deployment, pools: Sequence[str], fits: Sequence[MemberFit]) -> tuple[MemberPlacement, ...]:
    return tuple(
        MemberPlacement(engine=e.name, role=m.role, pool=pool, devices=fit.devices)
        for (e, m), pool, fit in zip(deployment.members(), pools, fits)
    )


def empty_state(cluster: Cluster, classes: Mapping[str, InferenceClass]) -> ClusterState:
    fills = {
        p.name: PoolFill.empty(classes[p.class_name], p.nodes)
        for p in (cluster.pools or ())
        if p.class_name in classes
    }
    return ClusterState(cluster, fills)


def replay(
    state: ClusterState, deployment_key: str, own: Sequence[tuple[str, int, tuple[PoolPlacement, ...]]]
) -> set[int]:
    """Fill ``state`` with every allocation in admission order; ``own`` are
    this deployment's kept replicas as (order, index, pods), used instead of
    its entries in the pool allocations. Returns the own indexes that did not
    fit behind earlier admissions."""
    events: list[tuple[str, str, str, int, object]] = []
    for pool in state.cluster.pools or ():
        if pool.name not in state.fills:
            continue
        for a in pool.allocations:
            if a.deployment != deployment_key:
                events.append((a.order, a.replica, pool.name, -1, a.pods))
    for order, index, pods in own:
        events.append((order, "", "", index, pods))
    # Sorting by replica then pool keeps the replay independent of input order.
    events.sort(key=lambda e: (e[0], e[1], e[2], e[3]))
    failed: set[int] = set()
    for _, _, pool, index, pods in events:
        if index < 0:
            place_groups(state.fills, [(pool, pods)])  # type: ignore[list-item]
        elif place_groups(state.fills, [(p.pool, p.pods) for p in pods]) is None:  # type: ignore[attr-defined]
            failed.add(index)
        else:
            state.own += 1
    return failed


def candidates(state: ClusterState, matches: Matches, member: int) -> list[tuple[str, MemberFit]]:
    out = []
    for pool in sorted(state.cluster.pools or (), key=lambda p: p.name):
        fit = matches.fit(pool.class_name, member)
        if isinstance(fit, MemberFit) and pool.name in state.fills:
            out.append((pool.name, fit))
    return out


def plan_replica(deployment: Deployment, state: ClusterState, matches: Matches) -> Plan | str:
    """Where one more replica would go here, or why it does not fit."""
    members = deployment.members()
    pools: list[str] = []
    fits: list[MemberFit] = []
    fills = state.fills
    for i in range(len(members)):
        best: tuple[tuple[int, str], dict[str, PoolFill], MemberFit] | None = None
        for pool, fit in candidates(state, matches, i):
            groups = pod_groups(deployment, [*pools, pool], [*fits, fit])
            trial = {p.pool: state.fills[p.pool].copy() for p in groups}
            used = place_groups(trial, [(p.pool, p.pods) for p in groups])
            if used is None:
                continue
            spare = sum(sum(trial[p].free[n]) for p, n in used)
            if best is None or (spare, pool) < best[0]:
                best = ((spare, pool), trial, fit)
        if best is None:
            return _no_room(deployment, state, matches, pools, fits, i)
        pools.append(best[0][1])
        fits.append(best[2])
        fills = best[1]
    groups = pod_groups(deployment, pools, fits)
    return Plan(
        members=member_placements(deployment, pools, fits),
        pods=groups,
        free_after=sum(fills[p.pool].free_devices() for p in groups),
        fills=fills,
    )


def bind(state: ClusterState, plan: Plan) -> None:
    state.fills.update(plan.fills)
    state.own += 1


def _no_room(
    deployment: Deployment,
    state: ClusterState,
    matches: Matches,
    pools: list[str],
    fits: list[MemberFit],
    i: int,
) -> str:
    members = deployment.members()
    engine, member = members[i]
    if engine.gang:
        # A gang is judged whole: show the fill before any of its members.
        first = next(k for k, (e, _) in enumerate(members) if e is engine)
        pools, fits = pools[:first], fits[:first]
    # The fill the failing member saw: the earlier members already placed.
    base = {p: f.copy() for p, f in state.fills.items()}
    place_groups(base, [(p.pool, p.pods) for p in pod_groups(deployment, pools, fits)])
    parts = []
    for pool, fit in candidates(state, matches, i):
        fill = base[pool]
        vec = fill.vector(fit.demand)
        each = ", ".join(f"{n} {d}" for d, n in fit.demand) or "no devices"
        if engine.gang:
            size = sum(m.pods for m in engine.members)
            nodes = fill.room(size * engine.copies, vec, True)
            parts.append(f"pool {pool} has {nodes}/{fill.nodes} nodes with {each} free, gang needs {size}")
        else:
            need = member.pods * engine.copies
            parts.append(f"pool {pool} has room for {fill.room(need, vec, False)} of {need} pods ({each} each)")
    if engine.gang:
        who = f"{engine.name}: " if len(deployment.engines) > 1 else ""
    else:
        who = f"{engine.name}/{member.role}: " if len(members) > 1 else ""
    return who + ", ".join(parts)
