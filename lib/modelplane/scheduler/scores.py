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
``Ranking`` keeps in a heap (one push per bind instead of re-scoring the
fleet per replica); ``rank`` is the normalised view of the same order.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from .filters import untolerated
from .plan import ClusterState, NoRoom, Plan
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
        taints = state.cluster.taints
        return len(untolerated(deployment.tolerations, taints, (PREFER_NO_SCHEDULE,))) if taints else 0


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
    return tuple([s.raw(deployment, state, plan) for s in SCORES])


def rank(deployment: Deployment, feasible: Mapping[str, tuple[ClusterState, Plan]]) -> list[tuple[str, tuple[float, ...]]]:
    """Feasible clusters best first, each with its normalised scores."""
    per_score = [
        normalize({name: s.raw(deployment, st, plan) for name, (st, plan) in feasible.items()})
        for s in SCORES
    ]
    scored = [(name, tuple(scores[name] for scores in per_score)) for name in feasible]
    scored.sort(key=lambda item: (tuple(-x for x in item[1]), item[0]))
    return scored


class Ranking:
    """The score phase: clusters with room for one more replica, best first.

    Each cluster is scored once, into a heap of (``select_key``, name), so
    ties go to the name. Binding changes one cluster's fill only, so only
    that cluster is re-scored (``rescore``); the entries that leaves stale
    are skipped when they surface.
    """

    def __init__(self, deployment: Deployment, keys: Mapping[str, tuple[float, ...]]) -> None:
        """Rank the clusters with room by their ``select_key`` (scored by the
        filter phase while each cluster's fill was at hand)."""
        self._deployment = deployment
        self._keys = dict(keys)
        self._heap = [(k, n) for n, k in self._keys.items()]
        heapq.heapify(self._heap)

    def pop_best(self) -> str | None:
        """Take the best cluster off the heap until it is re-scored; None
        when no cluster has room."""
        heap = self._heap
        while heap and self._keys.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)
        return heapq.heappop(heap)[1] if heap else None

    def rescore(self, name: str, state: ClusterState, plan: Plan | NoRoom) -> None:
        """Rank cluster ``name`` again with its new ``plan``, or drop it when
        it has no room left."""
        if isinstance(plan, Plan):
            key = self._keys[name] = select_key(self._deployment, state, plan)
            heapq.heappush(self._heap, (key, name))
        else:
            del self._keys[name]
