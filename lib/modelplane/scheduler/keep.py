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
- a pool it uses is gone, no longer matches its member, or the engines
  changed shape, or
- it no longer fits counting only allocations admitted before it
  (checked by ``plan.replay``): it is overcommitted.

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
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass

from .filters import untolerated
from .matching import Matches, Misfit
from .types import NO_EXECUTE, Cluster, Current, Deployment, Fleet

STAY = "stay"
HOLD = "hold"
EVICT = "evict"

OVERCOMMITTED = "overcommitted: no longer fits behind replicas admitted earlier"


@dataclass(frozen=True)
class Verdict:
    current: Current
    action: str  # STAY | HOLD | EVICT
    reason: str = ""  # with EVICT: why it lost its place; with HOLD: why it is not judged

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
    for i, name in enumerate(current.pools):
        pool = pools.get(name)
        if pool is None:
            return Verdict(current, EVICT, f"pool {name} no longer exists")
        fit = matches.fit(pool.class_name, i)
        if fit is None:
            return Verdict(current, HOLD, NOT_OBSERVED)
        if isinstance(fit, Misfit):
            return Verdict(current, EVICT, f'pool {name} no longer matches request "{fit.request}"')
    return Verdict(current, STAY)


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
