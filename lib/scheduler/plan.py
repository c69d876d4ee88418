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

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from .capacity import Compiled, PoolFill, compile_groups, place_compiled, place_groups, shape
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
    """A tentative placement of one replica on one cluster. Binding places
    ``pods`` for real; on the same fill that gives the same nodes."""

    members: tuple[MemberPlacement, ...]
    pods: tuple[PoolPlacement, ...]
    free_after: int  # free DRA devices left in the pools it uses (packing)


@dataclass
class ClusterState:
    """A cluster's fill. Only pools that can matter get one: those whose
    class fits some member, and those this deployment's replicas use."""

    cluster: Cluster
    fills: dict[str, PoolFill]
    own: int = 0  # replicas of this deployment here (spread)
    _candidates: dict[int, list[tuple[str, MemberFit]]] = field(default_factory=dict)
    # Member 0's trial per candidate pool does not depend on other members:
    # compiled once per cluster, it is what most deployments ever need.
    _first: list[tuple[str, MemberFit, Compiled]] | None = None


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


def empty_state(
    cluster: Cluster, classes: Mapping[str, InferenceClass], matches: Matches, also: Collection[str] = ()
) -> ClusterState:
    """Empty nodes for the pools that can matter (see ``ClusterState``)."""
    fills = {}
    for p in cluster.pools or ():
        if p.class_name in classes and (p.name in also or matches.useful(p.class_name)):
            key = ("shape", p.class_name)
            dims, per_node = matches.memo.get(key) or matches.memo.setdefault(key, shape(classes[p.class_name]))
            fills[p.name] = PoolFill(dims, per_node, p.nodes)
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
    """The pools a member may use here, by name (computed once per cluster)."""
    out = state._candidates.get(member)
    if out is None:
        out = []
        for pool in sorted(state.cluster.pools or (), key=lambda p: p.name):
            fit = matches.fit(pool.class_name, member)
            if isinstance(fit, MemberFit) and pool.name in state.fills:
                out.append((pool.name, fit))
        state._candidates[member] = out
    return out


def _groups(deployment: Deployment, matches: Matches, pools: list[str], fits: list[MemberFit]) -> tuple[PoolPlacement, ...]:
    key = ("groups", tuple(pools), tuple(f.demand for f in fits))
    hit = matches.memo.get(key)
    if hit is None:
        hit = matches.memo[key] = pod_groups(deployment, pools, fits)
    return hit  # type: ignore[return-value]


def _members(deployment: Deployment, matches: Matches, pools: list[str], fits: list[MemberFit]) -> tuple[MemberPlacement, ...]:
    key = ("members", tuple(pools), tuple(id(f) for f in fits))
    hit = matches.memo.get(key)
    if hit is None:
        # Fits live as long as the match table, so their ids are stable keys.
        hit = matches.memo[key] = (member_placements(deployment, pools, fits), fits)
    return hit[0]  # type: ignore[index]


def _trials(
    deployment: Deployment, state: ClusterState, matches: Matches, i: int, pools: list[str], fits: list[MemberFit]
) -> list[tuple[str, MemberFit, Compiled]]:
    """For member ``i``: each candidate pool with the compiled groups of
    members 0..i placed (earlier members in ``pools``)."""
    if i == 0 and state._first is not None:
        return state._first
    out = []
    for pool, fit in candidates(state, matches, i):
        groups = _groups(deployment, matches, [*pools, pool], [*fits, fit])
        compiled = compile_groups(state.fills, [(p.pool, p.pods) for p in groups])
        if compiled is not None:
            out.append((pool, fit, compiled))
    if i == 0:
        state._first = out
    return out


def plan_replica(deployment: Deployment, state: ClusterState, matches: Matches) -> Plan | str:
    """Where one more replica would go here, or why it does not fit. Trials
    are placed on the live fill and undone, which is cheaper than copying."""
    members = deployment.members()
    pools: list[str] = []
    fits: list[MemberFit] = []
    free_after = 0
    for i in range(len(members)):
        best: tuple[int, str, MemberFit, int] | None = None
        for pool, fit, compiled in _trials(deployment, state, matches, i, pools, fits):
            taken = place_compiled(state.fills, compiled)
            if taken is None:
                continue
            spare = taken.spare()
            if best is None or (spare, pool) < best[:2]:
                free = sum(state.fills[name].free_devices() for name, _ in compiled)
                best = (spare, pool, fit, free)
            taken.undo()
        if best is None:
            return _no_room(deployment, state, matches, pools, fits, i)
        pools.append(best[1])
        fits.append(best[2])
        free_after = best[3]
    return Plan(
        members=_members(deployment, matches, pools, fits),
        pods=_groups(deployment, matches, pools, fits),
        free_after=free_after,
    )


def bind(state: ClusterState, plan: Plan) -> None:
    taken = place_groups(state.fills, [(p.pool, p.pods) for p in plan.pods])
    # The plan was made on this very fill, so it must still fit.
    assert taken is not None, "plan no longer fits the fill it was made on"
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
        vec = fill.vector(dict(fit.demand))
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
