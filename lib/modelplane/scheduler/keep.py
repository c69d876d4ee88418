"""Keep: which placed replicas stay, and which indexes exist at all.

Replica indexes are identities, not positions: replica 3 is the same
ModelReplica (same name, same admission key) for its whole life, wherever
it is moved. Hence:

- Scale-up adds the lowest unused indexes.
- Scale-down removes one replica at a time: first any replica that would
  have to move anyway (highest index first), then the highest index on the
  cluster holding the most replicas of this deployment (ties: the cluster
  holding the highest index). Spread survives a scale-down, so indexes
  need not stay contiguous: {0, 2} is a valid 2-replica deployment.
- Two observed replicas with one index (a move caught half-way) keep the
  one on the cluster that sorts first.

A current replica then stays where it is unless:

- its cluster is gone (the fleet was fetched and does not list it),
- its cluster carries a NoExecute taint the deployment does not tolerate,
- a pool it uses is gone, no longer matches its member, or the engines
  changed shape, or
- it no longer fits counting only allocations admitted before it
  (checked by ``plan.replay``): then it is overcommitted and moves.

It is HELD (kept untouched and reported) when it cannot be judged yet: the
clusters were not fetched, its cluster has not published pools, or a class
its pools name is not known. Readiness, labels and cache state never evict:
like Kubernetes' IgnoredDuringExecution, they gate new placement only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .filters import untolerated
from .matching import Matches, Misfit
from .types import NO_EXECUTE, Cluster, Current, Deployment, Fleet

STAY = "stay"
HOLD = "hold"
MOVE = "move"


@dataclass(frozen=True)
class Verdict:
    current: Current
    action: str  # STAY | HOLD | MOVE
    reason: str = ""  # with MOVE: why it leaves


def judge(deployment: Deployment, fleet: Fleet, matches: Matches, current: Current, cluster: Cluster | None) -> Verdict:
    """Whether ``current`` may stay, before capacity is checked."""
    if not fleet.clusters_known:
        return Verdict(current, HOLD)
    if cluster is None:
        return Verdict(current, MOVE, f"cluster {current.cluster} no longer exists")
    if cluster.pools is None:
        return Verdict(current, HOLD)
    drain = untolerated(deployment.tolerations, cluster.taints, (NO_EXECUTE,))
    if drain:
        return Verdict(current, MOVE, f"NoExecute taint {min(drain, key=lambda t: t.key)}")
    members = deployment.members()
    if len(current.pools) != len(members):
        return Verdict(current, MOVE, "engines changed shape")
    pools = {p.name: p for p in cluster.pools}
    for i, name in enumerate(current.pools):
        pool = pools.get(name)
        if pool is None:
            return Verdict(current, MOVE, f"pool {name} no longer exists")
        fit = matches.fit(pool.class_name, i)
        if fit is None:
            return Verdict(current, HOLD)
        if isinstance(fit, Misfit):
            return Verdict(current, MOVE, f'pool {name} no longer matches request "{fit.request}"')
    return Verdict(current, STAY)


def dedupe(current: Sequence[Current]) -> list[Current]:
    seen: dict[int, Current] = {}
    for c in sorted(current, key=lambda c: (c.index, c.cluster)):
        seen.setdefault(c.index, c)
    return list(seen.values())


def scale_down(verdicts: Sequence[Verdict], replicas: int) -> tuple[list[Verdict], list[int]]:
    """(survivors, dropped indexes) after removing down to ``replicas``."""
    survivors = list(verdicts)
    dropped: list[int] = []
    while len(survivors) > max(replicas, 0):
        moving = [v for v in survivors if v.action == MOVE]
        if moving:
            victim = max(moving, key=lambda v: v.current.index)
        else:
            load: dict[str, list[int]] = {}
            for v in survivors:
                load.setdefault(v.current.cluster, []).append(v.current.index)
            cluster = max(load, key=lambda c: (len(load[c]), max(load[c])))
            victim = max((v for v in survivors if v.current.cluster == cluster), key=lambda v: v.current.index)
        survivors.remove(victim)
        dropped.append(victim.current.index)
    return survivors, sorted(dropped)


def new_indexes(taken: set[int], replicas: int) -> list[int]:
    """The lowest unused indexes bringing the count up to ``replicas``."""
    out: list[int] = []
    i = 0
    while len(taken) + len(out) < replicas:
        if i not in taken:
            out.append(i)
        i += 1
    return out
