"""The rollout: from the replicas of older revisions to the current one.

Each call takes one step, from what is observed, like the Deployment
controller does with ReplicaSets; nothing is remembered but the replicas'
own labels and annotations.

Replicas are of the *current* revision (label ``modelplane.ai/revision``
equal to the deployment's; unlabelled replicas composed before revisions
existed are adopted as current) or *outdated*. A replica is *available*
when it is Ready and its ModelEndpoint is routable (composed with its
Backend published): only then does it carry traffic.

RollingUpdate, with surge S and unavailability U resolved against R =
``spec.replicas`` (``strategy.py``):

- the scheduler keeps ``min(R, max(new, R + S - old))`` current-revision
  replicas, so at most R + S replicas exist (draining ones aside);
- outdated replicas are retired (drained, then deleted) when
  ``old + target - (R - U) - unavailable new > 0``: first those not
  available, then available ones while more than R - U replicas would
  stay available. With U = 0, an old replica leaves only after a new one
  is available; with no room for a surge replica and U = 0 the rollout
  waits and says so (``Progressing=False``); with U > 0 old replicas go
  first to make room.

Recreate retires every outdated replica at once and places the current
revision only when none is left.

Outdated replicas whose cluster is not Ready (held) or has failed over are
never retired by the rollout: they are held until their cluster is back.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from modelplane import conditions as C
from modelplane.scheduler import HELD, Schedule

from .observed import Child
from .strategy import RECREATE, Strategy


@dataclass(frozen=True)
class Step:
    target: int  # current-revision replicas the scheduler keeps
    retire: dict[tuple[int, str], str] = field(default_factory=dict)  # outdated replica -> reason


def step(strategy: Strategy, replicas: int, revision: str, new: Sequence[Child], old: Sequence[Child],
         old_draining: int, movable: Callable[[Child], bool]) -> Step:
    """One step. ``new``/``old``: current and outdated replicas that count
    (not draining, not failed over); ``old_draining``: outdated replicas
    still being removed; ``movable``: whether an outdated replica may be
    retired now (its cluster is Ready)."""
    if not old and not (strategy.type == RECREATE and old_draining):
        return Step(replicas)
    why = f"outdated: revision {revision} replaces it"
    if strategy.type == RECREATE:
        retire = {c.key: why for c in old if movable(c)}
        return Step(0, retire)
    target = min(replicas, max(len(new), replicas + strategy.max_surge - len(old)))
    min_available = replicas - strategy.max_unavailable
    new_available = sum(1 for c in new if c.available)
    new_unavailable = max(target - new_available, 0)
    budget = len(old) + target - min_available - new_unavailable
    if budget <= 0:
        return Step(target)
    load: dict[str, int] = {}
    for c in (*new, *old):
        load[c.cluster] = load.get(c.cluster, 0) + 1
    # Unavailable first; then from the cluster holding most replicas, highest index.
    order = sorted((c for c in old if movable(c)), key=lambda c: (c.available, -load[c.cluster], -c.index))
    retire: dict[tuple[int, str], str] = {}
    for c in [c for c in order if not c.available][:budget]:
        retire[c.key] = why
    spare = new_available + sum(1 for c in old if c.available) - min_available
    for c in [c for c in order if c.available][:max(spare, 0)]:
        retire[c.key] = why
    return Step(target, retire)


@dataclass(frozen=True)
class Progress:
    status: bool
    reason: str
    message: str


@dataclass(frozen=True)
class Standing:
    """Where the rollout stands after this call's step: what the Progressing condition reports."""

    strategy: Strategy
    replicas: int                            # spec.replicas
    revision: str
    sched: Schedule
    available: Callable[[int, str], bool]    # whether the placed replica (index, cluster) is available
    outdated: int = 0                        # outdated replicas left, draining ones included
    retiring: int = 0                        # outdated replicas retired now
    in_flight: bool = False                  # some replica is being drained or deleted


def progress(s: Standing) -> Progress:
    """The Progressing condition."""
    strategy, replicas, revision, sched, available = s.strategy, s.replicas, s.revision, s.sched, s.available
    outdated, retiring, in_flight = s.outdated, s.retiring, s.in_flight
    updated = len(sched.placements)
    ready = sum(1 for p in sched.placements if available(p.index, p.cluster))
    pending = any(p.state != HELD and not available(p.index, p.cluster) for p in sched.placements)
    counts = f"revision {revision}: {updated}/{replicas} replicas updated, {ready} available"
    if outdated:
        counts += f", {outdated} of older revisions left"
    if not outdated and not sched.unplaced and updated == replicas and ready == replicas:
        return Progress(True, C.NEW_REVISION_AVAILABLE, counts)
    if sched.unplaced and not retiring and not in_flight and not pending:
        capacity = any(u.capacity for u in sched.unplaced)
        wait = ""
        if outdated:
            wait = (f"; waiting: maxUnavailable {strategy.max_unavailable} keeps the older revision serving"
                    if strategy.type != RECREATE else "")
        n = len(sched.unplaced)
        return Progress(False, C.INSUFFICIENT_CAPACITY if capacity else C.UNSCHEDULABLE,
                        f"{counts}; {n} replica{'s' if n > 1 else ''} cannot be placed{wait}: "
                        f"{sched.unplaced[0].message}")
    reason = C.ROLLING_UPDATE if outdated and strategy.type != RECREATE else (
        C.RECREATING if outdated else C.REPLICAS_UPDATING)
    return Progress(True, reason, counts)
