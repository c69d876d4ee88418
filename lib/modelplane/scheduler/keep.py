"""Keep: which placed replicas stay, and which indexes exist at all.

Replica indexes are identities, not positions: replica 3 is the same
ModelReplica (same name, same admission key) for its whole life, wherever
it is moved. Hence:

- Scale-up adds the lowest unused indexes, skipping those of extra
  replicas and of ModelReplicas still terminating.
- Scale-down removes one replica at a time: first any replica that is
  evicted anyway (highest index first), then one that failover replaced
  (its cluster came back; the oldest outage first), then the highest index
  on the cluster holding the most replicas of this deployment (ties: the
  cluster holding the highest index). Spread survives a scale-down, so
  indexes need not stay contiguous: {0, 2} is a valid 2-replica deployment.
- Two observed replicas with one index (a move caught half-way) keep the
  one on the cluster that sorts first.

A current replica is EVICTED (it lost its place) when:

- its cluster is gone (the fleet was fetched and does not list it: deleted,
  or no longer matching ``clusterSelector``),
- its cluster carries a NoExecute taint the deployment does not tolerate,
- a pool it uses is gone, or the engines changed shape,
- a pool's class no longer has the devices its pods take: some device
  passes the request's selectors but has fewer than ``count`` left per
  node, or the class lists none (the capacity arithmetic cannot hold its
  pods), or
- it no longer fits counting only allocations admitted before it
  (checked by ``plan.replay``): it is overcommitted.

A replica whose pool's class no longer satisfies a request's SELECTORS (a
class edited: a driver upgrade, memory corrected to what the driver
publishes) STAYS, like Kubernetes' IgnoredDuringExecution and DRA, which
never re-evaluates an allocated claim. It is reported HELD with the pool,
class, request, selector and fix (``explain.mismatch``); its ModelReplica
is kept untouched; its observed pods (``spec.placement``) take capacity at
its admission key, so overcommit still evicts it; no new replica goes on
that pool. A deployment's own selector edit never lands here: it is a new
revision, and the rollout replaces the outdated replicas (extras, below).

It is HELD (kept untouched and reported) when it cannot be judged yet or
should not be judged now: the clusters were not fetched or none is listed
at all (an empty fleet is not read as every cluster deleted), its cluster has
not published pools, a class its pools name is not known, or its cluster
is not Ready (a NotReady cluster may report its pools with no usable nodes
for a while; that must not evict anything). Labels on a cluster that still
matches and cache state never evict: like Kubernetes'
IgnoredDuringExecution, they gate new placement only.

Extra replicas (``Current.extra``: outdated revision, draining, replaced by
failover) are judged by the same rules except device matching (an outdated
revision's members are not this deployment's), with their observed pods.

``keep()`` is the phase in one call: judge (``judge``, ``judge_extra``),
scale down (``scale_down``), replay each cluster where replicas or extras
stay (``plan.replay``) to find the overcommitted, and pick the indexes to
place (``new_indexes``). Its ``Kept`` names every outcome: what stays,
what leaves to be placed again, what is evicted or removed for good, and
the fills the filter phase goes on with.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass

from . import explain
from .filters import untolerated
from .matching import Matches, MemberFit, Misfit
from .plan import ClusterState, empty_state, pod_groups, replay
from .types import (
    HELD,
    KEPT,
    NO_EXECUTE,
    Cluster,
    Current,
    Deployment,
    Eviction,
    Fleet,
    MemberPlacement,
    Placement,
)

STAY = "stay"
HOLD = "hold"
EVICT = "evict"

OVERCOMMITTED = "overcommitted: no longer fits behind replicas admitted earlier"


@dataclass(frozen=True)
class Verdict:
    current: Current
    action: str  # STAY | HOLD | EVICT
    # With EVICT: why it lost its place; with HOLD: why it is not judged; with
    # STAY: a selector its pool's class no longer satisfies (it stays, reported HELD).
    reason: str = ""

NOT_OBSERVED = "not observed yet"
NOT_READY = "not Ready"
NO_CLUSTERS = "no InferenceCluster listed"


def _common(deployment: Deployment, fleet: Fleet, current: Current, cluster: Cluster | None) -> Verdict | None:
    """The rules every replica obeys, extra or not; None: judge further."""
    if not fleet.clusters_known:
        return Verdict(current, HOLD, NOT_OBSERVED)
    if cluster is None:
        if not fleet.clusters:
            # Like the node lifecycle controller's full disruption: an empty
            # listing is not taken as every cluster deleted at once.
            return Verdict(current, HOLD, NO_CLUSTERS)
        return Verdict(current, EVICT, f"cluster {current.cluster} no longer exists")
    drain = untolerated(deployment.tolerations, cluster.taints, (NO_EXECUTE,))
    if drain:
        return Verdict(current, EVICT, f"NoExecute taint {min(drain, key=lambda t: t.key)}")
    if cluster.pools is None:
        return Verdict(current, HOLD, NOT_OBSERVED)
    if not cluster.ready:
        return Verdict(current, HOLD, NOT_READY)
    return None


def judge(deployment: Deployment, fleet: Fleet, matches: Matches, current: Current, cluster: Cluster | None) -> Verdict:
    """Whether ``current`` may stay, before capacity is checked."""
    early = _common(deployment, fleet, current, cluster)
    if early is not None:
        return early
    assert cluster is not None and cluster.pools is not None
    members = deployment.members()
    if len(current.pools) != len(members):
        return Verdict(current, EVICT, "engines changed shape")
    pools = {p.name: p for p in cluster.pools}
    mismatch = ""
    for i, name in enumerate(current.pools):
        pool = pools.get(name)
        if pool is None:
            return Verdict(current, EVICT, f"pool {name} no longer exists")
        fit = matches.fit(pool.class_name, i)
        if fit is None:
            return Verdict(current, HOLD, NOT_OBSERVED)
        if isinstance(fit, Misfit):
            if not fit.selector:
                return Verdict(current, EVICT, f'pool {name} no longer matches request "{fit.request}" ({fit.detail})')
            mismatch = mismatch or explain.mismatch(name, pool.class_name, fit.request, fit.selector, fit.detail)
    if mismatch and not current.pods:
        # Nothing observed to count its capacity by: held like one not judged.
        return Verdict(current, HOLD, mismatch)
    return Verdict(current, STAY, mismatch)


def judge_extra(deployment: Deployment, fleet: Fleet, current: Current, cluster: Cluster | None) -> Verdict:
    """``judge`` for an extra replica: its observed pools must still exist
    with a known class; its members are not matched again."""
    early = _common(deployment, fleet, current, cluster)
    if early is not None:
        return early
    assert cluster is not None and cluster.pools is not None
    pools = {p.name: p for p in cluster.pools}
    for name in sorted({pp.pool for pp in current.pods} | set(current.pools)):
        pool = pools.get(name)
        if pool is None:
            return Verdict(current, EVICT, f"pool {name} no longer exists")
        if pool.class_name not in fleet.classes:
            return Verdict(current, HOLD, NOT_OBSERVED)
    return Verdict(current, STAY)


def dedupe(current: Sequence[Current]) -> list[Current]:
    """One replica per index: the one on the cluster that sorts first."""
    seen: dict[int, Current] = {}
    for c in sorted(current, key=lambda c: (c.index, c.cluster)):
        seen.setdefault(c.index, c)
    return list(seen.values())


def scale_down(verdicts: Sequence[Verdict], replicas: int) -> tuple[list[Verdict], list[Verdict]]:
    """(survivors, removed) after removing down to ``replicas``."""
    survivors = list(verdicts)
    dropped: list[Verdict] = []
    while len(survivors) > max(replicas, 0):
        evicted = [v for v in survivors if v.action == EVICT]
        replaced = [v for v in survivors if v.current.replaced]
        if evicted:
            victim = max(evicted, key=lambda v: v.current.index)
        elif replaced:
            victim = min(replaced, key=lambda v: (v.current.replaced, -v.current.index))
        else:
            load: dict[str, list[int]] = {}
            for v in survivors:
                load.setdefault(v.current.cluster, []).append(v.current.index)
            cluster = max(load, key=lambda c: (len(load[c]), max(load[c])))
            victim = max((v for v in survivors if v.current.cluster == cluster), key=lambda v: v.current.index)
        survivors.remove(victim)
        dropped.append(victim)
    return survivors, sorted(dropped, key=lambda v: v.current.index)


def new_indexes(taken: set[int], replicas: int, avoid: Container[int] = frozenset()) -> list[int]:
    """The lowest indexes neither taken nor to ``avoid`` bringing the count
    of ``taken`` up to ``replicas``."""
    out: list[int] = []
    i = 0
    while len(taken) + len(out) < replicas:
        if i not in taken and i not in avoid:
            out.append(i)
        i += 1
    return out


@dataclass(frozen=True)
class Kept:
    """What the keep phase decided, for the later phases and the result.

    Attributes:
        placed: Replicas that stay where they are, KEPT or HELD, by index.
        leaving: Replicas that lost their place, by index. Each is placed
            again (MOVED) or reported unplaced with where it left and why.
        wanted: The indexes to place, ascending: new ones (scale-up) and the
            leaving ones.
        fills: Per cluster where replicas or extras stay, its fill replayed
            with them. The filter and bind phases go on filling these.
        held_on: Per cluster, how many held replicas it has. Held replicas
            are not replayed, but they count towards spread.
        extras: Extra replicas that stay, KEPT or HELD, by (index, cluster).
        evicted: Replicas and extras that lost their place, the leaving ones
            included, by (index, cluster).
        removed: Replicas a scale-down let go, then duplicates of an index.
    """

    placed: Mapping[int, Placement]
    leaving: Mapping[int, Eviction]
    wanted: tuple[int, ...]
    fills: Mapping[str, ClusterState]
    held_on: Mapping[str, int]
    extras: tuple[Placement, ...]
    evicted: tuple[Eviction, ...]
    removed: tuple[Eviction, ...]


def keep(
    deployment: Deployment,
    fleet: Fleet,
    matches: Matches,
    clusters: Mapping[str, Cluster],
    current: Sequence[Current],
) -> Kept:
    """The keep phase: which observed replicas stay, and which indexes to place.

    Args:
        deployment: The deployment being scheduled.
        fleet: What the deployment can see.
        matches: The deployment's match table.
        clusters: The fleet's clusters by name.
        current: The deployment's replicas as observed, extras included.

    Returns:
        Every replica's outcome; see ``Kept``.
    """
    regular = [c for c in current if not c.extra]
    unique = dedupe(regular)
    verdicts = [judge(deployment, fleet, matches, c, clusters.get(c.cluster)) for c in unique]
    survivors, dropped = scale_down(verdicts, deployment.replicas)
    extras = _by_action(judge_extra(deployment, fleet, c, clusters.get(c.cluster))
                        for c in sorted((c for c in current if c.extra), key=_index_then_cluster))
    replicas = _by_action(survivors)
    placed = {v.current.index: _held(deployment, matches, v, clusters.get(v.current.cluster))
              for v in replicas[HOLD]}
    leaving = {v.current.index: _eviction(v) for v in replicas[EVICT]}
    kept_extras = [_as_extra(deployment, v.current, HELD, v.reason) for v in extras[HOLD]]
    # Evicted and not placed again: extras, and replicas a scale-down let go.
    evicted_for_good = [_eviction(v) for v in extras[EVICT]]
    fills: dict[str, ClusterState] = {}
    for here in _replay_stayers(deployment, fleet, matches, clusters, replicas[STAY], extras[STAY]):
        fills[here.fill.cluster.name] = here.fill
        placed.update(here.replicas)
        leaving.update((e.index, e) for e in here.overcommitted)
        kept_extras += here.extras
        evicted_for_good += here.overcommitted_extras
    # A replica a scale-down lets go that had lost its place anyway is evicted.
    evicted_for_good += [_eviction(v) for v in dropped if v.action == EVICT]
    return Kept(
        placed=placed,
        leaving=leaving,
        wanted=_wanted(deployment, fleet, current, survivors, leaving),
        fills=fills,
        held_on=_count_by_cluster(replicas[HOLD]),
        extras=tuple(sorted(kept_extras, key=_index_then_cluster)),
        evicted=tuple(sorted([*leaving.values(), *evicted_for_good], key=_index_then_cluster)),
        removed=(*_scaled_down(dropped, deployment.replicas), *_duplicates(regular, unique)),
    )


@dataclass(frozen=True)
class _Stayed:
    """One cluster replayed with the replicas and extras that may stay there.

    Attributes:
        fill: The cluster's fill with those that still fit.
        replicas: The replicas that still fit (KEPT), by index.
        overcommitted: The replicas that no longer fit; they leave.
        extras: The extras that still fit (KEPT).
        overcommitted_extras: The extras that no longer fit; they are evicted.
    """

    fill: ClusterState
    replicas: dict[int, Placement]
    overcommitted: list[Eviction]
    extras: list[Placement]
    overcommitted_extras: list[Eviction]


def _replay_stayers(
    deployment: Deployment,
    fleet: Fleet,
    matches: Matches,
    clusters: Mapping[str, Cluster],
    replicas: Sequence[Verdict],
    extras: Sequence[Verdict],
) -> list[_Stayed]:
    """``_stay_on`` for every cluster where replicas or extras stay, by name."""
    staying: dict[str, list[Verdict]] = {}
    for v in replicas:
        staying.setdefault(v.current.cluster, []).append(v)
    extras_on = _by_cluster(extras)
    return [
        _stay_on(deployment, fleet, matches, clusters[name], staying.get(name, []), extras_on.get(name, ()))
        for name in sorted(set(staying) | set(extras_on))
    ]


def _stay_on(
    deployment: Deployment,
    fleet: Fleet,
    matches: Matches,
    cluster: Cluster,
    verdicts: Sequence[Verdict],
    extras: Sequence[Current],
) -> _Stayed:
    """Replay ``cluster`` with the replicas (``verdicts``, all STAY) and
    ``extras`` that may stay, each at its own admission key (extras, and
    replicas whose selectors no longer match, with their observed pods):
    those that no longer fit behind earlier admissions are overcommitted."""
    stay = [v.current for v in verdicts]
    mismatched = {v.current.index: v.reason for v in verdicts if v.reason}
    pools = {p.name: p for p in cluster.pools or ()}
    # judge() proved every member of a stayer fits its pool, or only its selectors no longer match.
    fits = {c.index: tuple(matches.fit(pools[p].class_name, i) for i, p in enumerate(c.pools)) for c in stay}
    own = [
        (_admission_key(deployment, c), c.index,
         c.pods if c.index in mismatched else pod_groups(deployment, c.pools, fits[c.index]))  # type: ignore[arg-type]
        for c in stay
    ]
    extra = [(_admission_key(deployment, c), c.index, c.pods) for c in extras]
    used = {p for c in stay for p in c.pools} | {pp.pool for c in extras for pp in c.pods}
    fill = empty_state(cluster, fleet.classes, matches, used)
    misfits = replay(fill, deployment.key, own, extra)
    return _Stayed(
        fill=fill,
        replicas={
            c.index: Placement(
                index=c.index,
                cluster=cluster.name,
                order=order,
                members=_members(deployment, c.pools, fits[c.index]),
                pods=pods,
                state=HELD if c.index in mismatched else KEPT,
                held_because=mismatched.get(c.index),
            )
            for c, (order, _, pods) in zip(stay, own)
            if c.index not in misfits.own
        },
        overcommitted=[Eviction(i, cluster.name, OVERCOMMITTED) for i in sorted(misfits.own)],
        extras=[_as_extra(deployment, c, KEPT) for c in extras if c.index not in misfits.extras],
        overcommitted_extras=[
            Eviction(c.index, c.cluster, OVERCOMMITTED) for c in extras if c.index in misfits.extras
        ],
    )


def _members(
    deployment: Deployment, pools: Sequence[str], fits: Sequence[MemberFit | Misfit | None]
) -> tuple[MemberPlacement, ...]:
    """Each member's pool, with its resolved devices where its class still fits it."""
    return tuple(
        MemberPlacement(engine.name, member.role, pool, fit.devices if isinstance(fit, MemberFit) else ())
        for (engine, member), pool, fit in zip(deployment.members(), pools, fits)
    )


def _held(deployment: Deployment, matches: Matches, verdict: Verdict, cluster: Cluster | None) -> Placement:
    """A replica we cannot judge yet: echo what is known; the caller keeps the
    observed ModelReplica as it is."""
    c = verdict.current
    classes = {p.name: p.class_name for p in (cluster.pools or ())} if cluster else {}
    fits = [matches.fit(classes[pool], i) if pool in classes else None
            for i, (_, pool) in enumerate(zip(deployment.members(), c.pools))]
    complete = len(fits) == len(deployment.members()) and all(isinstance(f, MemberFit) for f in fits)
    return Placement(
        index=c.index,
        cluster=c.cluster,
        order=_admission_key(deployment, c),
        members=_members(deployment, c.pools, fits),
        pods=pod_groups(deployment, c.pools, fits) if complete else (),  # type: ignore[arg-type]
        state=HELD,
        held_because=verdict.reason,
    )


def _as_extra(deployment: Deployment, c: Current, state: str, why: str | None = None) -> Placement:
    """An extra replica as reported: where it is and what it holds."""
    return Placement(index=c.index, cluster=c.cluster, order=_admission_key(deployment, c), pods=c.pods,
                     state=state, held_because=why)


def _wanted(
    deployment: Deployment,
    fleet: Fleet,
    current: Sequence[Current],
    survivors: Sequence[Verdict],
    leaving: Mapping[int, Eviction],
) -> tuple[int, ...]:
    """The indexes to place, ascending: the new ones and the leaving ones."""
    taken = {v.current.index for v in survivors}
    avoid = _Avoid({c.index for c in current if c.extra}, fleet.terminating)
    return tuple(sorted(new_indexes(taken, deployment.replicas, avoid) + list(leaving)))


class _Avoid:
    """Indexes a new replica must not take: extras' and terminating ones
    (the latter may be lazy and is asked only when needed)."""

    def __init__(self, extras: set[int], terminating: Container[int]) -> None:
        self.extras = extras
        self.terminating = terminating

    def __contains__(self, index: object) -> bool:
        return index in self.extras or index in self.terminating


def _scaled_down(dropped: Sequence[Verdict], replicas: int) -> list[Eviction]:
    """The replicas a scale-down let go that still had their place."""
    return [
        Eviction(v.current.index, v.current.cluster,
                 f"replaced while its cluster was down (since {v.current.replaced})"
                 if v.current.replaced else f"scaled down to {replicas}")
        for v in dropped
        if v.action != EVICT
    ]


def _duplicates(regular: Sequence[Current], unique: Sequence[Current]) -> list[Eviction]:
    """Every copy of an index but the one ``dedupe`` kept."""
    firsts = {c.index: c.cluster for c in unique}
    return [
        Eviction(c.index, c.cluster, f"a duplicate of replica {c.index} on {firsts[c.index]}")
        for c in sorted(regular, key=_index_then_cluster)
        if firsts[c.index] != c.cluster
    ]


def _by_action(verdicts: Iterable[Verdict]) -> dict[str, list[Verdict]]:
    """Verdicts grouped by action, each group in input order."""
    groups: dict[str, list[Verdict]] = {STAY: [], HOLD: [], EVICT: []}
    for v in verdicts:
        groups[v.action].append(v)
    return groups


def _by_cluster(verdicts: Iterable[Verdict]) -> dict[str, list[Current]]:
    """The judged replicas grouped by cluster, each group in input order."""
    groups: dict[str, list[Current]] = {}
    for v in verdicts:
        groups.setdefault(v.current.cluster, []).append(v.current)
    return groups


def _count_by_cluster(verdicts: Iterable[Verdict]) -> Counter[str]:
    return Counter(v.current.cluster for v in verdicts)


def _eviction(v: Verdict) -> Eviction:
    return Eviction(v.current.index, v.current.cluster, v.reason)


def _admission_key(deployment: Deployment, c: Current) -> str:
    """The order ``c`` was admitted in: as observed, else its index's own."""
    return c.order or deployment.order(c.index)


def _index_then_cluster(item: Current | Placement | Eviction) -> tuple[int, str]:
    return item.index, item.cluster
