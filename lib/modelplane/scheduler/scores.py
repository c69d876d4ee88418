"""Scores: which fitting cluster is best for the next replica.

Each score maps a raw number per cluster to 0-100 with the one shared
``normalize`` (100 = best). They are compared in priority order, not
summed, so a later score only breaks ties of the earlier ones and no weight
tuning can let packing undo spreading:

1. ``TaintPreference``: fewer untolerated PreferNoSchedule taints. The
   platform team asked to avoid the cluster unless nothing else fits.
2. ``Spread``: fewer replicas of this deployment already there, so losing
   one cluster costs as few replicas as possible.
3. ``Pack``: fewer free devices left in the pools the replica would use, so
   big free pools stay whole for big jobs.

Remaining ties go to the cluster name, ascending.

Each normalised score falls as its raw value rises, so "best normalised
scores" is exactly "lowest raw values": ``select_key`` gives the raw tuple
the scheduler keeps in a heap (one push per bind instead of re-scoring the
fleet per replica); ``rank`` is the normalised view of the same order.
"""

from __future__ import annotations

from collections.abc import Mapping

from .filters import untolerated
from .plan import ClusterState, Plan
from .types import PREFER_NO_SCHEDULE, Deployment

MAX_SCORE = 100.0


def normalize(raw: Mapping[str, float], lower_is_better: bool = True) -> dict[str, float]:
    """Scale raw values to 0-100, 100 for the best; all equal -> all 100."""
    if not raw:
        return {}
    lo, hi = min(raw.values()), max(raw.values())
    if hi == lo:
        return {k: MAX_SCORE for k in raw}
    span = hi - lo
    if lower_is_better:
        return {k: MAX_SCORE * (hi - v) / span for k, v in raw.items()}
    return {k: MAX_SCORE * (v - lo) / span for k, v in raw.items()}


class TaintPreference:
    NAME = "TaintPreference"

    def raw(self, deployment: Deployment, state: ClusterState, plan: Plan) -> float:
        return len(untolerated(deployment.tolerations, state.cluster.taints, (PREFER_NO_SCHEDULE,)))


class Spread:
    NAME = "Spread"

    def raw(self, deployment: Deployment, state: ClusterState, plan: Plan) -> float:
        return state.own


class Pack:
    NAME = "Pack"

    def raw(self, deployment: Deployment, state: ClusterState, plan: Plan) -> float:
        return plan.free_after


SCORES = (TaintPreference(), Spread(), Pack())


def select_key(deployment: Deployment, state: ClusterState, plan: Plan) -> tuple[float, ...]:
    """Raw scores in priority order; the smallest (then the name) wins."""
    return tuple(s.raw(deployment, state, plan) for s in SCORES)


def rank(deployment: Deployment, feasible: Mapping[str, tuple[ClusterState, Plan]]) -> list[tuple[str, tuple[float, ...]]]:
    """Feasible clusters best first, each with its normalised scores."""
    per_score = [
        normalize({name: s.raw(deployment, st, plan) for name, (st, plan) in feasible.items()})
        for s in SCORES
    ]
    scored = [(name, tuple(scores[name] for scores in per_score)) for name in feasible]
    scored.sort(key=lambda item: (tuple(-x for x in item[1]), item[0]))
    return scored
