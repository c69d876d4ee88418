"""compose-model-cache: stage a model's weights once on every selected cluster.

Recipe: read the ModelCache, require the InferenceClusters it selects (and,
by name, any it has objects on that the selector no longer lists, to tell a
deleted cluster from an unselected one), and per cluster compose a
Namespace, an RWX PVC, an optional token Secret and a hydration Job, each
holding the cluster's provider config with a Usage (lib/modelplane/cache).
Objects on a deleted cluster are dropped, their Usages once those Objects
are gone (asked for by name); on an unselected one, everything is kept.
Status reports a phase per cluster; the cache is Ready when every matched
cluster is.
"""
from modelplane import conditions as C
from modelplane.errors import InputError
from modelplane.modelcache.compose import Source, awaited, compose_cache, unlisted
from modelplane.modelcache.status import FAILED, NO_MATCHING_CLUSTERS, READY
from modelplane.modelcache.targets import targets
from modelplane.objects import OBJECT_API, OBJECT_KIND
from modelplane.pipeline.composition import Composition
from modelplane.pipeline.xr import parse
from modelplane.schemas.model_cache import ModelCache

CLUSTERS = "clusters"
CLUSTER_PREFIX = "cluster-"   # one InferenceCluster by name
OBJECT_PREFIX = "object-"     # one of our Objects by name, awaited by its Usage


def compose(c: Composition) -> None:
    mc = parse(ModelCache, c.xr)
    hf = mc.spec.source.huggingFace
    if hf is None:
        raise InputError("spec.source.huggingFace", "set repo and sizeGiB for a source of type HuggingFace")
    selector = (mc.spec.clusterSelector.matchLabels if mc.spec.clusterSelector else None) or {}
    c.require(CLUSTERS, "modelplane.ai/v1alpha1", "InferenceCluster", match_labels=selector)

    clusters = c.required(CLUSTERS)
    if clusters is None:
        # Not fetched yet: keep every child (seeded) and the status we published last.
        previous = c.xr.get("status") or {}
        c.set_status(**{k: previous[k] for k in ("clusters", "readyClusters") if k in previous})
        c.condition(C.HYDRATED, "Unknown", C.WAITING_FOR_INPUTS, "waiting for the InferenceClusters to be fetched")
        c.set_ready(False)
        return

    token = hf.tokenSecretRef
    source = Source(repo=hf.repo, revision=hf.revision or "main", size_gib=hf.sizeGiB,
                    token_secret=token.name if token else None, token_key=(token.key if token else None) or "token")
    matched = targets(clusters)
    deleted, gone = set(), set()
    for name in unlisted(matched, c.observed):
        c.require(f"{CLUSTER_PREFIX}{name}", "modelplane.ai/v1alpha1", "InferenceCluster", match_name=name)
        if c.required(f"{CLUSTER_PREFIX}{name}") == []:   # fetched, and it does not exist
            deleted.add(name)
    for name in awaited(c.observed, frozenset(deleted)):
        c.require(f"{OBJECT_PREFIX}{name}", OBJECT_API, OBJECT_KIND, match_name=name, namespace=c.namespace)
        if c.required(f"{OBJECT_PREFIX}{name}") == []:
            gone.add(name)
    result = compose_cache(c.name, c.namespace, source, matched, c.observed, frozenset(deleted), frozenset(gone))
    for name, (obj, ready) in result.desired.items():
        c.desire(name, obj, ready=ready)
    for name in result.drop:
        c.drop(name)

    c.set_status(clusters=result.clusters, readyClusters=sum(e["phase"] == READY for e in result.clusters))
    ready = result.matched > 0 and result.matched_ready == result.matched
    if ready:
        c.condition(C.HYDRATED, True, C.AVAILABLE, f"weights ready on {result.matched} cluster(s)")
    elif result.matched == 0:
        c.condition(C.HYDRATED, False, NO_MATCHING_CLUSTERS, "no InferenceCluster matches spec.clusterSelector")
    else:
        waiting = [f"{e['name']}: {e['phase']}" + (f" ({e.get('message', '')})" if e["phase"] == FAILED else "")
                   for e in result.clusters if e["phase"] != READY]
        c.condition(C.HYDRATED, False, C.PROVISIONING,
                    f"{result.matched_ready}/{result.matched} clusters ready; " + "; ".join(waiting))
    c.set_ready(ready)
