"""Filters: may a NEW replica go to this cluster?

Each filter is a small object with a ``NAME`` and ``filter(ctx, cluster)``
returning None (pass) or one short reason, phrased so identical reasons can
be counted and naming the numbers involved. Filters gate new placement
only; whether a placed replica may stay is the keep phase's question
(``keep.py``), as in Karmada.

These filters depend only on the deployment and the cluster, so the
scheduler runs them once per cluster and reuses the verdict for every
replica. Free capacity changes as replicas are bound; it is checked by the
planner (``plan.py``) and reported under ``CAPACITY``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .matching import Matches, MemberFit
from .signature import ClusterSig
from .types import NO_EXECUTE, NO_SCHEDULE, Cluster, Deployment, Fleet, Taint, Toleration

CAPACITY = "Capacity"


@dataclass(frozen=True)
class FilterContext:
    """Everything a filter may read, in one object so a new input leaves the
    filter signatures alone."""

    deployment: Deployment
    fleet: Fleet
    matches: Matches


class ClusterReady:
    NAME = "ClusterReady"

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
        if cluster.ready:
            return None
        return f"not ready ({cluster.not_ready_reason})" if cluster.not_ready_reason else "not ready"


class ClusterSelector:
    NAME = "ClusterSelector"

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
        labels = cluster.labels
        if all(labels.get(k) == v for k, v in ctx.deployment.cluster_selector.items()):
            return None
        wrong = sorted(k for k, v in ctx.deployment.cluster_selector.items() if cluster.labels.get(k) != v)
        if not wrong:
            return None
        k = wrong[0]
        want = ctx.deployment.cluster_selector[k]
        have = cluster.labels.get(k)
        first = f"label {k} missing, want {want}" if have is None else f"label {k}={have}, want {want}"
        more = f" (+{len(wrong) - 1} more)" if len(wrong) > 1 else ""
        return f"clusterSelector: {first}{more}"


def tolerates(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    """Kubernetes toleration matching."""
    for t in tolerations:
        if t.effect and t.effect != taint.effect:
            continue
        if t.operator == "Exists":
            if not t.key or t.key == taint.key:
                return True
        elif t.key == taint.key and t.value == taint.value:
            return True
    return False


def untolerated(tolerations: Sequence[Toleration], taints: Sequence[Taint], effects: tuple[str, ...]) -> list[Taint]:
    return [t for t in taints if t.effect in effects and not tolerates(tolerations, t)]


class TaintToleration:
    """NoSchedule and NoExecute keep new replicas away; PreferNoSchedule
    only lowers the score (``scores.py``)."""

    NAME = "TaintToleration"

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
        bad = untolerated(ctx.deployment.tolerations, cluster.taints, (NO_SCHEDULE, NO_EXECUTE))
        if not bad:
            return None
        first = min(bad, key=lambda t: (t.key, t.effect))
        more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
        return f"{first.effect} taint {first}{more}"


class CacheReady:
    """A deployment with a cache only goes where the cache is Ready."""

    NAME = "CacheReady"

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
        cache = ctx.deployment.cache
        if cache is None:
            return None
        ready = ctx.fleet.cache_ready
        if ready is None:
            return f"cache {cache} status not observed yet"
        if cluster.name not in ready:
            return f"cache {cache} not on this cluster"
        return None if ready[cluster.name] else f"cache {cache} not Ready"


class DeviceMatch:
    """Every member needs some pool whose class satisfies all its requests."""

    NAME = "DeviceMatch"

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
        if cluster.pools is None:
            return "no pools reported yet"
        # Most clusters pass: check every member at once from the per-class
        # bit sets, and spell out the reason only for those that do not.
        have = 0
        for pool in cluster.pools:
            have |= ctx.matches.mask(pool.class_name)
        if have == ctx.matches.everyone:
            return None
        members = ctx.deployment.members()
        for i, (engine, member) in enumerate(members):
            details: list[str] = []
            request = ""
            for pool in sorted(cluster.pools, key=lambda p: p.name):
                fit = ctx.matches.fit(pool.class_name, i)
                if isinstance(fit, MemberFit):
                    break
                if fit is None:
                    details.append(f"{pool.name}: class {pool.class_name} not found")
                else:
                    request = request or fit.request
                    details.append(f"{pool.name}: {fit.detail}")
            else:
                who = f"{engine.name}/{member.role}: " if len(members) > 1 else ""
                what = f'a device matching request "{request}"' if request else "a known class"
                why = f" ({'; '.join(details)})" if details else ""
                return f"{who}no pool has {what}{why}"
        return None


# In order: cheapest and most telling first; the first failing filter names
# the reason for a cluster.
FILTERS = (ClusterReady(), ClusterSelector(), TaintToleration(), CacheReady(), DeviceMatch())


def quick_pass(ctx: FilterContext, cluster: Cluster, sig: ClusterSig) -> bool:
    """True only when ``run_filters`` would pass ``cluster``, checked the
    cheap way for the common case (Ready, untainted and reporting pools, as
    its signature remembers; selector matches; no cache; some pool for
    every member); False means "ask ``run_filters``", which names the
    reason."""
    if not sig.plain or sig.pools is None or ctx.deployment.cache is not None:
        return False
    selector = ctx.deployment.cluster_selector
    if selector:
        labels = cluster.labels
        for k, v in selector.items():
            if labels.get(k) != v:
                return False
    matches = ctx.matches
    cover = matches.cover.get(sig.classes)
    if cover is None:
        have = 0
        for name in sig.classes:
            have |= matches.mask(name)
        cover = matches.cover[sig.classes] = have == matches.everyone
    return cover


def run_filters(ctx: FilterContext, cluster: Cluster) -> tuple[str, str] | None:
    """(filter NAME, reason) of the first filter that rejects, or None."""
    for f in FILTERS:
        reason = f.filter(ctx, cluster)
        if reason is not None:
            return f.NAME, reason
    return None
