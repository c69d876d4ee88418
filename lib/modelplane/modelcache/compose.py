"""One ModelCache, composed: the objects per cluster and the status they imply.

``compose_cache`` is pure: it takes the parsed spec, the matched clusters
and the observed children, and returns what to desire, what to drop and the
status entries. Nothing is lost: a cluster that is not listed (no longer
selected, or not known to be deleted) keeps its observed objects untouched
and stays in the status with a message; only objects the current spec no
longer wants on a listed cluster (an old revision's Job, a removed token)
are dropped, and everything on a cluster whose InferenceCluster no longer
exists (``deleted``): its provider configs wait for those objects (below),
so keeping them would keep the configs forever. Their Usages are dropped
only once their Objects are known to be gone (``awaited``, ``gone``).

Every Object that deletes its remote object comes with a Usage that keeps
the cluster's ClusterProviderConfig until the Object is gone
(``modelplane.platform.ordering``): deleting the InferenceCluster must not
strand the cache's PVC, Job and token on the cluster. A Usage carries its
Object's labels, so it is kept and dropped with its cluster's objects.

The token is copied by two Objects (``modelplane.secretcopy``), neither of
which ever holds it. A cache composed by an earlier release has one Object
that does, in its spec: it is released (observe-only) and dropped on the
next call, so the remote Secret stays in place throughout and the Job, whose
manifest does not change, is not touched.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane import labels as L
from modelplane import secretcopy
from modelplane.naming import cache_pvc_name
from modelplane.objects import remote_status
from modelplane.platform.ordering import provider_config_usages

from . import hydrate
from .status import PENDING, READY, entry, phase
from .targets import Target


@dataclass(frozen=True)
class Source:
    repo: str
    revision: str
    size_gib: int
    token_secret: str | None = None
    token_key: str = "token"


@dataclass
class Result:
    desired: dict[str, tuple[dict, bool]] = field(default_factory=dict)  # name -> (object, ready)
    drop: list[str] = field(default_factory=list)
    clusters: list[dict] = field(default_factory=list)
    matched_ready: int = 0
    matched: int = 0


def _by_cluster(observed: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Mapping[str, Any]]]:
    """Observed children grouped by their modelplane.ai/cluster label."""
    out: dict[str, dict[str, Mapping[str, Any]]] = {}
    for name, obj in sorted(observed.items()):
        cluster = ((obj.get("metadata") or {}).get("labels") or {}).get(L.CLUSTER)
        if cluster:
            out.setdefault(cluster, {})[name] = obj
    return out


def _observed_phase(children: Mapping[str, Mapping[str, Any]], job_name: str | None) -> tuple[str, str] | None:
    """The phase an already-composed cluster reports (None when nothing was composed)."""
    jobs = [n for n in children if n.startswith("job-")]
    if not jobs:
        return None
    job = children[job_name] if job_name in children else children[max(jobs)]
    pvcs = [o for n, o in children.items() if n.startswith("pvc-")]
    return phase(remote_status(job), remote_status(pvcs[0]) if pvcs else {}, hydrate.hydration(job))


def unlisted(targets: list[Target], observed: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Clusters the cache has objects on that the selector did not list (deleted or unselected)."""
    return sorted(set(_by_cluster(observed)) - {t.name for t in targets})


def awaited(observed: Mapping[str, Mapping[str, Any]], deleted: frozenset[str]) -> list[str]:
    """The Objects whose Usages on ``deleted`` clusters wait for them to be gone (their names).

    A Usage dropped together with its Object would not wait: Crossplane strips
    the composite label off what it garbage-collects, and only a composed
    Usage waits for its user (docs/e2e-crossplane.md). So the Usage stays
    until its Object is known not to exist.
    """
    out = set()
    for cluster in sorted(deleted):
        for obj in _by_cluster(observed).get(cluster, {}).values():
            if obj.get("kind") == "Usage":
                out.add(((obj.get("spec") or {}).get("by") or {}).get("resourceRef", {}).get("name", ""))
    return sorted(out - {""})


def compose_cache(cache: str, namespace: str, source: Source, targets: list[Target],
                  observed: Mapping[str, Mapping[str, Any]], deleted: frozenset[str] = frozenset(),
                  gone: frozenset[str] = frozenset()) -> Result:
    """``deleted``: unlisted clusters whose InferenceCluster is known not to exist; ``gone``:
    names of Objects (``awaited``) known not to exist."""
    out = Result()
    pvc_name = cache_pvc_name(cache)
    children = _by_cluster(observed)
    listed = {t.name for t in targets}
    for t in targets:
        out.matched += 1
        names = hydrate.resource_names(t.name, source.repo, source.revision)
        mine = children.get(t.name, {})
        if t.missing:
            # Keep whatever is there (the runtime seeded it); report what is missing.
            seen = _observed_phase(mine, names["job"])
            ph, msg = (seen[0], f"{t.missing}; keeping the cache already composed") if seen else (PENDING, t.missing)
            out.clusters.append(entry(t.name, ph, msg, pvc_name, t.storage_class))
            out.matched_ready += ph == READY
            continue
        pc = t.provider_config
        want = {
            names["namespace"]: hydrate.namespace_object(cache, namespace, t.name, pc),
            names["pvc"]: hydrate.pvc_object(cache, namespace, t.name, pc, t.storage_class, source.size_gib),
            names["job"]: hydrate.job_object(cache, namespace, t.name, pc, source.repo, source.revision,
                                             token=source.token_secret is not None),
        }
        if source.token_secret is not None:
            copy = hydrate.token_copy(cache, namespace, t.name, pc, source.token_secret, source.token_key)
            want[names["token_copy"]], want[names["token_data"]] = secretcopy.objects(copy)
            if names["token"] in mine and not secretcopy.is_released(mine[names["token"]]):
                # An earlier release's single Object: observe-only first, so that dropping it
                # next time leaves the Secret the Job's pods read (``secretcopy.release``).
                want[names["token"]] = secretcopy.release(mine[names["token"]]["metadata"]["name"], copy)
        usages = provider_config_usages(want)
        want.update(usages)
        job = mine.get(names["job"])
        ph, msg = phase(remote_status(job), remote_status(mine.get(names["pvc"])), hydrate.hydration(job))
        for name, obj in sorted(want.items()):
            # A Usage only guards deletion: nothing to become ready.
            ready = True if name in usages else ph == READY if name == names["job"] else None
            out.desired[name] = (obj, ready)
        out.drop += sorted(n for n in mine if n not in want)
        out.clusters.append(entry(t.name, ph, msg, pvc_name, t.storage_class))
        out.matched_ready += ph == READY
    for cluster in sorted(set(children) - listed):
        if cluster in deleted:
            # Deleted through its configs, which wait for them: a Usage goes once its Object has.
            out.drop += sorted(n for n, o in children[cluster].items()
                               if o.get("kind") != "Usage" or o["spec"]["by"]["resourceRef"]["name"] in gone)
            continue
        seen = _observed_phase(children[cluster], None) or (PENDING, "")
        msg = f"InferenceCluster {cluster} is not listed (gone or no longer selected); keeping its cache"
        out.clusters.append(entry(cluster, seen[0], msg, pvc_name, ""))
    out.clusters.sort(key=lambda e: e["name"])
    return out
