"""Which observed replicas count this call: failover and the rollout step.

Every observed ModelReplica is, for the scheduler, either one of
``spec.replicas`` (current revision, on a cluster that has not failed, not
draining) or an extra replica (draining, of an outdated revision, or on a
failed cluster). The rollout step decides how many current-revision
replicas the scheduler keeps (``target``) and which outdated ones are
retired now; failover decides which clusters have failed and when the next
one would (``wake``, for the response TTL).
"""
from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from modelplane.scheduler import Cluster, Current

from . import failover, rollout
from .observed import Child
from .strategy import Strategy


@dataclass(frozen=True)
class Plan:
    step: rollout.Step
    current: list[Current]  # every observed replica, extras marked
    outdated: frozenset[tuple[int, str]]  # replicas of an older revision (draining ones included)
    replaced: dict[tuple[int, str], str]  # replicas on failed clusters -> outage start
    wake: float | None  # seconds until a down cluster fails over


def plan(children: Sequence[Child], clusters: Mapping[str, Cluster], since: Callable[[str], str], revision: str,
         strategy: Strategy, replicas: int, after: datetime.timedelta | None, now: datetime.datetime) -> Plan:
    active = [k for k in children if not k.draining]
    down = failover.outages(clusters, since, {k.cluster for k in active}, after, now)
    failed = {name for name, o in down.items() if o.failed}
    outdated = frozenset(k.key for k in children if k.revision and k.revision != revision)
    new = [k for k in active if k.key not in outdated and k.cluster not in failed]
    old = [k for k in active if k.key in outdated and k.cluster not in failed]

    def up(name: str) -> bool:
        c = clusters.get(name)
        return c is not None and c.ready and c.pools is not None

    step = rollout.step(strategy, replicas, revision, new, old,
                        sum(1 for k in children if k.draining and k.key in outdated),
                        lambda k: up(k.cluster))
    current = [k.current(extra=bool(k.draining) or k.key in outdated or k.cluster in failed) for k in children]
    replaced = {k.key: down[k.cluster].since for k in active if k.cluster in failed}
    return Plan(step, current, outdated, replaced, failover.wake_in(down.values(), after, now))
