"""One cluster's fill, and where a replica's members would go in it.

``ClusterState`` is a cluster's pools with their nodes filled by every
allocation that fits in admission order (``capacity.py``), this
deployment's own kept replicas included at their own admission key; its
``replay`` reports which of those own replicas and extras no longer fit
behind earlier ones (``Overcommitted``), so the keep phase can move or
evict them.

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

from .capacity import Compiled, Groups, PoolFill, compile_groups, place_groups, replay_rows, shape, trial
from .matching import Matches, MemberFit
from .signature import ClusterSig, PoolNames, PoolSig
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


@dataclass(frozen=True)
class Overcommitted:
    """What ``replay`` could not fit behind earlier admissions.

    Own replicas and extras are kept apart because an extra may carry the
    index of a replica that counts.

    Attributes:
        own: Indexes of this deployment's kept replicas that did not fit.
        extras: Indexes of its extra replicas that did not fit.
    """

    own: frozenset[int] = frozenset()
    extras: frozenset[int] = frozenset()


@dataclass(slots=True)
class ClusterState:
    """A cluster's fill. Only pools that can matter get one: those whose
    class fits some member, and those this deployment's replicas use.
    ``memo`` is the deployment's shared memo (``Matches.memo``), so the
    many clusters with the same pools reuse replays and trials."""

    cluster: Cluster
    fills: dict[str, PoolFill]
    own: int = 0  # replicas of this deployment here (spread)
    memo: dict[tuple, object] = field(default_factory=dict)
    _layout: tuple[tuple[str, str], ...] | None = None
    # The trials of clusters with this layout (``_trials``), by (member, pools of earlier members).
    _trials: dict[tuple, list] | None = None
    # The fills are templates shared with other clusters (``quick_state``):
    # planning only reads them; ``writable`` copies them before a change.
    shared: bool = False

    def trials(self) -> dict[tuple, list]:
        """The memo of ``_trials`` shared by every cluster with this layout."""
        if self._trials is None:
            self._trials = self.memo.setdefault(("trials", self.layout()), {})  # type: ignore[assignment]
        return self._trials  # type: ignore[return-value]

    def writable(self) -> dict[str, PoolFill]:
        """The fills, this state's own to change."""
        if self.shared:
            self.fills = {name: fill.clone() for name, fill in self.fills.items()}
            self.shared = False
        return self.fills

    def layout(self) -> tuple[tuple[str, str], ...]:
        """(pool, class) of the tracked pools: what candidates and compiled
        groups depend on, shared by every cluster with the same pools."""
        if self._layout is None:
            fills = self.fills
            self._layout = tuple((p.name, p.class_name) for p in self.cluster.pools or () if p.name in fills)
        return self._layout


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
    memo = matches.memo
    for p in cluster.pools or ():
        if p.class_name in classes and (p.name in also or matches.useful(p.class_name)):
            key = ("shape", p.class_name)
            hit = memo.get(key)
            if hit is None:
                hit = memo[key] = shape(classes[p.class_name])
            dims, per_node = hit  # type: ignore[misc]
            fills[p.name] = PoolFill(dims, per_node, p.nodes)
    return ClusterState(cluster, fills, memo=memo)


def replay(
    state: ClusterState,
    deployment_key: str,
    own: Sequence[tuple[str, int, tuple[PoolPlacement, ...]]],
    extras: Sequence[tuple[str, int, tuple[PoolPlacement, ...]]] = (),
) -> Overcommitted:
    """Fill ``state`` with every allocation in admission order; ``own`` are
    this deployment's kept replicas as (order, index, pods), used instead of
    its entries in the pool allocations, and ``extras`` its extra replicas
    (outdated, draining, replaced) the same way. Returns those of both that
    did not fit behind earlier admissions."""
    state.writable()
    if not own and not extras and not any(f.free for f in state.fills.values()):
        _replay_others(state, deployment_key)
        return Overcommitted()
    # An event's k is its position in [*own, *extras]; -1 marks another
    # deployment's allocation, which sorts first among equal keys.
    events: list[tuple[str, str, str, int, object]] = []
    for pool in state.cluster.pools or ():
        if pool.name not in state.fills:
            continue
        for a in pool.allocations:
            if a.deployment != deployment_key:
                events.append((a.order, a.replica, pool.name, -1, a.pods))
    # Own replicas and extras sort after others with the same key, in input order.
    for k, (order, _, pods) in enumerate([*own, *extras]):
        events.append((order, "", "", k, pods))
    # Sorting by replica then pool keeps the replay independent of input order.
    events.sort(key=lambda e: (e[0], e[1], e[2], e[3]))
    own_misfits: set[int] = set()
    extra_misfits: set[int] = set()
    for _, _, pool, k, pods in events:
        if k < 0:
            place_groups(state.fills, [(pool, pods)])  # type: ignore[list-item]
            continue
        fits = place_groups(state.fills, [(p.pool, p.pods) for p in pods]) is not None  # type: ignore[attr-defined]
        if k < len(own):
            if fits:
                state.own += 1
            else:
                own_misfits.add(own[k][1])
        elif not fits:
            extra_misfits.add(extras[k - len(own)][1])
    return Overcommitted(frozenset(own_misfits), frozenset(extra_misfits))


def _replay_others(state: ClusterState, deployment_key: str) -> None:
    """``replay`` of empty fills without own replicas. Other deployments'
    allocations each sit in one pool, so pools replay independently, in the
    same (order, replica) order; the rows come from the shared memo when
    another cluster had a pool of the same size with the same allocations."""
    by_pool: dict[str, list] = {}
    for pool in state.cluster.pools or ():
        if pool.name in state.fills and pool.allocations:
            others = [a for a in pool.allocations if a.deployment != deployment_key]
            if others:
                by_pool.setdefault(pool.name, []).extend(others)
    for name, allocs in by_pool.items():
        if len(allocs) > 1:
            allocs.sort(key=lambda a: (a.order, a.replica))  # stable, as the full replay's sort
        fill = state.fills[name]
        vector = fill.vector
        _load_replayed(fill, tuple(tuple((g.count, vector(g.devices), g.gang) for g in a.pods) for a in allocs),
                       state.memo)


def _load_replayed(fill: PoolFill, groups: tuple[Groups, ...], memo: dict[tuple, object]) -> None:
    """Load ``fill`` (empty) with ``groups`` replayed in turn; the rows come
    from ``memo`` when a pool of the same size had the same allocations."""
    key = ("replay", fill.per_node, fill.nodes, groups)
    rows = memo.get(key)
    if rows is None:
        rows = memo[key] = replay_rows(fill, groups)
    fill.load(rows)  # type: ignore[arg-type]


def quick_state(
    cluster: Cluster, sig: ClusterSig, classes: Mapping[str, InferenceClass], matches: Matches, deployment_key: str
) -> ClusterState | None:
    """``empty_state`` then ``replay(state, deployment_key, ())``, built from
    the cluster's signature: each distinct pool is replayed once per call
    (``Matches.pools``) and shared by every cluster that has it. None when
    the shortcut does not apply: the deployment has allocations here (they
    must be left out), or two pools share a name. The fills are shared
    (``ClusterState.shared``) until the state is bound to."""
    if deployment_key in sig.deployments or not sig.unique_names:
        return None
    names = matches.layouts.get(sig.names)
    if names is None:
        names = matches.layouts[sig.names] = _tracked(sig.names, classes, matches)
    tracked, layout, trials = names  # type: ignore[misc]
    pools = sig.pools or ()
    known = matches.pools
    fills: dict[str, PoolFill] = {}
    for k in tracked:
        ps = pools[k]
        fill = known.get(ps)
        if fill is None:
            fill = known[ps] = _pool_template(ps, classes, matches)
        fills[ps.name] = fill  # type: ignore[assignment]
    # Most clusters are only planned on, never bound: they share the templates.
    return ClusterState(cluster, fills, memo=matches.memo, _layout=layout, _trials=trials, shared=True)


def _tracked(
    names: PoolNames, classes: Mapping[str, InferenceClass], matches: Matches
) -> tuple[tuple[int, ...], tuple[tuple[str, str], ...], dict]:
    """For clusters with these (pool, class) pairs: the indexes of the pools
    ``empty_state`` tracks, their layout and the layout's trials memo."""
    tracked = tuple(k for k, (_, c) in enumerate(names.pairs) if c in classes and matches.useful(c))
    layout = tuple(names.pairs[k] for k in tracked)
    return tracked, layout, matches.memo.setdefault(("trials", layout), {})


def _pool_template(ps: PoolSig, classes: Mapping[str, InferenceClass], matches: Matches) -> PoolFill:
    """A tracked pool's fill after the other deployments' allocations."""
    key = ("shape", ps.class_name)
    hit = matches.memo.get(key)
    if hit is None:
        hit = matches.memo[key] = shape(classes[ps.class_name])
    dims, per_node = hit  # type: ignore[misc]
    fill = PoolFill(dims, per_node, ps.nodes)
    if ps.allocations:
        vector = fill.vector
        groups = tuple(tuple((count, vector(dict(items)), gang) for count, items, gang in a) for a in ps.allocations)
        _load_replayed(fill, groups, matches.memo)
    fill.key()  # computed once, before the clusters that share it read it
    return fill


def candidates(state: ClusterState, matches: Matches, member: int) -> list[tuple[str, MemberFit]]:
    """The pools a member may use here, by name (shared by clusters with the same layout)."""
    key = ("candidates", state.layout(), member)
    out = matches.memo.get(key)
    if out is None:
        out = []
        for pool in sorted(state.cluster.pools or (), key=lambda p: p.name):
            fit = matches.fit(pool.class_name, member)
            if isinstance(fit, MemberFit) and pool.name in state.fills:
                out.append((pool.name, fit))
        matches.memo[key] = out
    return out  # type: ignore[return-value]


def _groups(deployment: Deployment, matches: Matches, pools: list[str], fits: list[MemberFit]) -> tuple[PoolPlacement, ...]:
    key = ("groups", tuple(pools), tuple(f.demand for f in fits))
    hit = matches.memo.get(key)
    if hit is None:
        hit = matches.memo[key] = pod_groups(deployment, pools, fits)
    return hit  # type: ignore[return-value]


Trial = tuple[str, MemberFit, Compiled, tuple[PoolPlacement, ...]]


def _trials(
    deployment: Deployment, state: ClusterState, matches: Matches, i: int, pools: list[str], fits: list[MemberFit]
) -> list[Trial]:
    """For member ``i``: each candidate pool with the pod groups, and their
    compiled form, of members 0..i placed (earlier members in ``pools``).
    They depend on the cluster's layout only, so clusters share them."""
    memo = state.trials()
    key = (i, tuple(pools))
    out = memo.get(key)
    if out is None:
        out = []
        for pool, fit in candidates(state, matches, i):
            groups = _groups(deployment, matches, [*pools, pool], [*fits, fit])
            compiled = compile_groups(state.fills, [(p.pool, p.pods) for p in groups])
            if compiled is not None:
                out.append((pool, fit, compiled, groups))
        memo[key] = out
    return out  # type: ignore[return-value]


@dataclass(frozen=True, eq=False)
class NoRoom:
    """Why one more replica does not fit a cluster, spelled out on demand:
    most such reasons are never shown (some other cluster takes the
    replica). The cluster's fill must not change before ``reason()``; the
    scheduler never binds to a cluster that has no room."""

    deployment: Deployment
    state: ClusterState
    matches: Matches
    pools: tuple[str, ...]
    fits: tuple[MemberFit, ...]
    member: int

    def reason(self) -> str:
        return _no_room(self.deployment, self.state, self.matches, list(self.pools), list(self.fits), self.member)


def plan_replica(deployment: Deployment, state: ClusterState, matches: Matches) -> Plan | str:
    """Where one more replica would go here, or why it does not fit."""
    got = try_replica(deployment, state, matches)
    return got.reason() if isinstance(got, NoRoom) else got


def try_replica(deployment: Deployment, state: ClusterState, matches: Matches) -> Plan | NoRoom:
    """``plan_replica`` with the reason left unwritten. Each member takes the
    candidate pool that fits most tightly; a trial's outcome per pool comes
    from the shared memo of (pool fill, groups), computed on a copy."""
    memo = matches.trials
    fills = state.fills
    pools: list[str] = []
    fits: list[MemberFit] = []
    last: Trial | None = None
    free_after = 0
    for i in range(len(matches.pairs)):
        best: tuple[int, str, Trial, int] | None = None
        for t in _trials(deployment, state, matches, i, pools, fits):
            spare = free = 0
            for name, pool_groups in t[2]:
                fill = fills[name]
                key = (fill.key(), pool_groups)
                got = memo.get(key, _UNSEEN)
                if got is _UNSEEN:
                    got = memo[key] = trial(fill, pool_groups)
                if got is None:
                    break
                spare += got[0]  # type: ignore[index]
                free += got[1]  # type: ignore[index]
            else:
                if best is None or spare < best[0] or (spare == best[0] and t[0] < best[1]):
                    best = (spare, t[0], t, free)
        if best is None:
            return NoRoom(deployment, state, matches, tuple(pools), tuple(fits), i)
        last, free_after = best[2], best[3]
        pools.append(last[0])
        fits.append(last[1])
    return _plan(deployment, matches, pools, fits, last, free_after)


_UNSEEN = object()


def _plan(
    deployment: Deployment, matches: Matches, pools: list[str], fits: list[MemberFit],
    last: Trial | None, free_after: int,
) -> Plan:
    """The Plan, one frozen object for the clusters that would place the
    replica alike. The last member's trial names every member's pool and
    fit (trials are memoised per layout and earlier members' pools), so it
    keys the memo, with the free devices left."""
    key = ("plan", id(last), free_after)
    hit = matches.memo.get(key)
    if hit is None:
        plan = Plan(members=member_placements(deployment, pools, fits),
                    pods=last[3] if last is not None else (), free_after=free_after)
        hit = matches.memo[key] = (plan, last)  # holding ``last`` keeps its id its own
    return hit[0]  # type: ignore[index]


def bind(state: ClusterState, plan: Plan) -> None:
    taken = place_groups(state.writable(), [(p.pool, p.pods) for p in plan.pods])
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
