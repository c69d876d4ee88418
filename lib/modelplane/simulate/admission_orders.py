"""Whether an outcome of competing ModelDeployments is one the scheduler could reach.

``kubectl apply -f`` creates many ModelDeployments within one second, so they
share a ``creationTimestamp``. Crossplane reconciles them in parallel, in no
fixed order, and placements are sticky: a deployment that sees a pool already
allocated places elsewhere or not at all, and keeps what it placed. When two
race onto one pool before either's allocation is published, the replay of the
pool's allocations (``scheduler.plan.replay``) keeps the one admitted first
(admission key ``{created}/{namespace}/{name}/{index}``) and evicts the other,
which then places as if it came last. Either way the fleet ends as if the
deployments had been admitted one after the other, in *some* order.
``modelplane simulate`` always plays one order (docs/tools/simulate.md).

``check`` decides whether an observed outcome is one of those: it runs the
real scheduler (``scheduler.schedule``) over every order of the competitors
(at most ``MAX_ORDERS``: 6 competitors), each deployment seeing the
allocations of those before it, and accepts the outcome when one order places
the same replicas on the same clusters and pools and leaves the same ones
unplaced, each loser with the reason the scheduler gives once every winner
holds its place. An overcommitted pool or a loser without a reason matches no
order. The unit is a whole deployment: all its replicas are placed in one
reconcile (one render), so orders interleave deployments, not replicas.

``fleet_before`` turns InferenceClusters and InferenceClasses (as served)
into the scheduler's ``Fleet`` with the competitors' own allocations left
out, through the readers compose-model-deployment uses.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from google.protobuf import json_format, struct_pb2

from modelplane.deployment.clusters import facts
from modelplane.deployment.inputs import deployment, read_classes
from modelplane.pipeline.xr import parse
from modelplane.scheduler import Allocation, Cluster, Current, Deployment, Fleet, Pool, Schedule, schedule
from modelplane.schemas.model_deployment import ModelDeployment

# 6! = 720 schedules per competitor at most; beyond that the check would take minutes.
MAX_ORDERS = 720


@dataclass(frozen=True)
class Observed:
    """One competitor's outcome, as the control plane reports it.

    ``placed``: replica index -> (cluster, the pool of each member in
    ``Deployment.members()`` order). ``unplaced``: replica index -> why, as
    the deployment reports it (its ``Scheduled`` condition's message).
    """

    deployment: str  # namespace/name
    placed: Mapping[int, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    unplaced: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    order: tuple[str, ...] = ()   # an admission order that yields the outcome, when accepted
    problems: tuple[str, ...] = ()  # why not, when rejected: one line per order tried, or the one found up front

    def __str__(self) -> str:
        if self.accepted:
            return f"reachable: admitted in the order {', '.join(self.order)}"
        return "not reachable in any admission order:\n  " + "\n  ".join(self.problems)


def _with_allocations(fleet: Fleet, placed: Schedule, d: Deployment) -> Fleet:
    """``fleet`` with ``placed``'s replicas allocated on their pools, as their
    InferenceClusters would publish them."""
    add: dict[tuple[str, str], list[Allocation]] = {}
    for p in placed.placements:
        replica = f"{d.namespace}/{d.name}-{p.index}-{p.cluster}"
        for pp in p.pods:
            add.setdefault((p.cluster, pp.pool), []).append(Allocation(replica, d.key, p.order, pp.pods))
    if not add:
        return fleet
    clusters = []
    for c in fleet.clusters:
        pools = c.pools if c.pools is None else tuple(
            replace(pool, allocations=(*pool.allocations, *add.get((c.name, pool.name), ()))) for pool in c.pools)
        clusters.append(replace(c, pools=pools))
    return replace(fleet, clusters=tuple(clusters))


def _current(s: Schedule) -> tuple[Current, ...]:
    return tuple(Current(p.index, p.cluster, tuple(m.pool for m in p.members), p.order) for p in s.placements)


def admit(fleet: Fleet, order: Sequence[Deployment], matcher: Any = None) -> dict[str, Schedule]:
    """Each deployment's schedule once all of ``order`` are admitted one after the other:
    deployment key -> what it ends with (its placements, and its unplaced replicas with
    the reasons it reports against the final fleet)."""
    placed: dict[str, Schedule] = {}
    for d in order:
        s = schedule(d, _visible(fleet, d), matcher=matcher)
        placed[d.key] = s
        fleet = _with_allocations(fleet, s, d)
    # Every deployment reconciles again once the others hold their places: a winner keeps
    # its replicas (sticky), a loser reports why it still finds no room.
    out = {}
    for d in order:
        mine = placed[d.key]
        out[d.key] = schedule(d, _visible(_without(fleet, d.key), d), _current(mine), matcher=matcher)
    return out


def _visible(fleet: Fleet, d: Deployment) -> Fleet:
    """The clusters compose-model-deployment is given: those whose labels match
    ``spec.clusterSelector`` (``deployment.inputs.require`` asks Crossplane for no others)."""
    sel = d.cluster_selector.items()
    return replace(fleet, clusters=tuple(c for c in fleet.clusters if all(c.labels.get(k) == v for k, v in sel)))


def _without(fleet: Fleet, deployment: str) -> Fleet:
    """``fleet`` without ``deployment``'s allocations: its replicas are observed children,
    which the function reads from them, not from the clusters."""
    clusters = []
    for c in fleet.clusters:
        pools = c.pools if c.pools is None else tuple(
            replace(p, allocations=tuple(a for a in p.allocations if a.deployment != deployment)) for p in c.pools)
        clusters.append(replace(c, pools=pools))
    return replace(fleet, clusters=tuple(clusters))


def _differences(observed: Observed, s: Schedule) -> list[str]:
    """How ``observed`` differs from what ``s`` ends with (empty: the same)."""
    want_placed = {p.index: (p.cluster, tuple(m.pool for m in p.members)) for p in s.placements}
    want_unplaced = {u.index: u.message for u in s.unplaced}
    out = []
    if dict(observed.placed) != want_placed:
        out.append(f"{observed.deployment} placed {dict(sorted(observed.placed.items()))}, "
                   f"the scheduler {dict(sorted(want_placed.items()))}")
    if set(observed.unplaced) != set(want_unplaced):
        out.append(f"{observed.deployment} unplaced {sorted(observed.unplaced)}, the scheduler {sorted(want_unplaced)}")
    for i, why in sorted(observed.unplaced.items()):
        if i in want_unplaced and want_unplaced[i] not in why:
            out.append(f"{observed.deployment} replica {i}: reported {why!r}, the scheduler says {want_unplaced[i]!r}")
    return out


def check(fleet: Fleet, competitors: Sequence[Deployment], observed: Iterable[Observed],
          matcher: Any = None) -> Verdict:
    """Whether some admission order of ``competitors`` through the real scheduler ends in
    ``observed`` (one entry per competitor). ``fleet`` is the fleet before any of them was
    placed (``fleet_before``)."""
    seen = {o.deployment: o for o in observed}
    keys = [d.key for d in competitors]
    if sorted(seen) != sorted(keys):
        raise ValueError(f"observed outcomes name {sorted(seen)}, the competitors are {sorted(keys)}: give one each")
    if math.factorial(len(competitors)) > MAX_ORDERS:
        raise ValueError(f"{len(competitors)} competitors have {math.factorial(len(competitors))} admission orders; "
                         f"at most {MAX_ORDERS} are tried (6 competitors): compare fewer at once")
    # Judged up front, whatever the order: every replica placed or unplaced, never both, and
    # every loser says why.
    problems = []
    for d in competitors:
        o = seen[d.key]
        both = sorted(set(o.placed) & set(o.unplaced))
        if both:
            problems.append(f"{d.key}: replicas {both} are both placed and unplaced")
        missing = sorted(set(range(d.replicas)) - set(o.placed) - set(o.unplaced))
        if missing:
            problems.append(f"{d.key}: replicas {missing} are neither placed nor unplaced")
        problems += [f"{d.key}: replica {i} is unplaced without a reason" for i, why in sorted(o.unplaced.items())
                     if not why.strip()]
    if problems:
        return Verdict(False, problems=tuple(problems))
    tried = []
    for order in itertools.permutations(competitors):
        ends = admit(fleet, order, matcher)
        delta = [line for d in order for line in _differences(seen[d.key], ends[d.key])]
        names = tuple(d.key for d in order)
        if not delta:
            return Verdict(True, order=names)
        tried.append(f"order {', '.join(names)}: {delta[0]}")
    return Verdict(False, problems=tuple(tried))


# --- from what the API server serves ---------------------------------------------------------


def fleet_before(clusters: Iterable[Mapping[str, Any]], classes: Iterable[Mapping[str, Any]],
                 competitors: Iterable[str]) -> Fleet:
    """The scheduler's ``Fleet`` of these InferenceClusters and InferenceClasses (JSON as
    served), without any allocation of ``competitors`` (``namespace/name``): the fleet they
    competed for. Read by compose-model-deployment's own readers."""
    drop = frozenset(competitors)
    read: list[Cluster] = []
    for obj in clusters:
        c = facts(json_format.ParseDict(dict(obj), struct_pb2.Struct())).cluster
        if c.pools is not None:
            c = replace(c, pools=tuple(
                Pool(p.name, p.class_name, p.nodes, tuple(a for a in p.allocations if a.deployment not in drop))
                for p in c.pools))
        read.append(c)
    by_name, _warnings = read_classes(classes)
    return Fleet(tuple(sorted(read, key=lambda c: c.name)), by_name)


def competitor(xr: Mapping[str, Any]) -> Deployment:
    """A ModelDeployment (as served) as the scheduler reads it in compose-model-deployment."""
    return deployment(parse(ModelDeployment, xr), xr)
