"""Every function that reaches a workload cluster holds its ClusterProviderConfig per user.

Deleting an InferenceCluster deletes its provider configs; an Object or
Release whose config is gone can never delete what it made on the cluster.
So each one that deletes through a config composes a Usage of it (one per
user: a Usage's ``by`` is a single resource), and drops that Usage when it
drops the user. The selection below is written out again on purpose rather
than read from ordering.py: it is the contract, not the implementation.
"""
from __future__ import annotations

import copy

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.validate.upstream import assert_valid

from tests.functions import caches as mc
from tests.functions import clusters as ic
from tests.functions import replicas as mr
from tests.support import desired, request, run, status

CONFIG_API = {"kubernetes.m.crossplane.io": "kubernetes.m.crossplane.io/v1alpha1",
              "helm.m.crossplane.io": "helm.m.crossplane.io/v1beta1"}


def users(d: dict[str, dict]) -> list[dict]:
    """Objects and Releases that delete through a workload cluster's ClusterProviderConfig."""
    out = []
    for o in d.values():
        ref = (o.get("spec") or {}).get("providerConfigRef") or {}
        policies = (o.get("spec") or {}).get("managementPolicies") or ["*"]
        if o["apiVersion"].split("/")[0] in CONFIG_API and ref.get("kind") == "ClusterProviderConfig" \
                and ({"*", "Delete"} & set(policies)):
            out.append(o)
    return out


def assert_every_user_holds_its_config(d: dict[str, dict]) -> int:
    held = users(d)
    usages = [o for o in d.values() if o["kind"] == "Usage" and o["spec"]["of"]["kind"] == "ClusterProviderConfig"]
    want = sorted((u["metadata"]["namespace"], u["apiVersion"], u["kind"], u["metadata"]["name"],
                   CONFIG_API[u["apiVersion"].split("/")[0]], u["spec"]["providerConfigRef"]["name"]) for u in held)
    got = sorted((g["metadata"]["namespace"], g["spec"]["by"]["apiVersion"], g["spec"]["by"]["kind"],
                  g["spec"]["by"]["resourceRef"]["name"], g["spec"]["of"]["apiVersion"],
                  g["spec"]["of"]["resourceRef"]["name"]) for g in usages)
    assert got == want
    for g in usages:
        assert g["spec"]["of"]["resourceRef"]["namespace"] == "" and g["spec"]["replayDeletion"] is True
        assert_valid(g)
    return len(held)


@pytest.mark.parametrize("xr", [mr.replica(), mr.replica([mr.gang()], cache=True), mr.pd()],
                         ids=["standalone", "gang", "prefill-decode"])
def test_model_replica(xr):
    rsp = run("compose-model-replica", request(xr))
    assert assert_every_user_holds_its_config(desired(rsp)) >= 3
    # A Usage never holds the replica's readiness back.
    for name, r in rsp.desired.resources.items():
        if r.resource["kind"] == "Usage":
            assert r.ready == fnv1.READY_TRUE, name


def test_model_replica_keeps_the_usage_of_a_kept_route():
    first = desired(run("compose-model-replica", request(mr.replica())))
    later = desired(run("compose-model-replica", request(mr.replica(gateway={}), observed=first)))
    assert f"{mr.NAME}-route" in later
    assert_every_user_holds_its_config(later)


def test_model_cache_on_every_cluster():
    d = desired(mc.go(mc.cache(), [mc.cluster("prod-a"), mc.cluster("prod-b")]))
    assert assert_every_user_holds_its_config(d) == 6       # PVC, token, Job on each


def test_model_cache_new_revision_drops_the_old_jobs_usage():
    first = mc.go(mc.cache(), [mc.cluster("prod-a")])
    d = desired(mc.go(mc.cache(revision="v2"), [mc.cluster("prod-a")], mc.observed_after(first)))
    assert assert_every_user_holds_its_config(d) == 3
    assert len([k for k in d if k.startswith("job-")]) == 1


def test_model_cache_keeps_usages_while_a_cluster_is_not_listed():
    first = mc.go(mc.cache(), [mc.cluster("prod-a")])
    d = desired(mc.go(mc.cache(), [], mc.observed_after(first)))
    assert assert_every_user_holds_its_config(d) == 3


@pytest.mark.parametrize("source", sorted(ic.BLOCKS))
def test_inference_cluster_own_stack(source):
    d = desired(ic.compose(ic.xr(source), ic.inputs(ic.klass())))
    assert assert_every_user_holds_its_config(d) >= 7     # the Releases, the GatewayClass and Gateway


def test_inference_cluster_disabled_component_drops_its_usage_even_when_observed():
    observed = ic.all_ready(ic.xr("Existing"), ic.inputs(ic.klass()))
    assert "usage-helm-pc-release-lws" in observed
    x = ic.xr("Existing", stack={"leaderWorkerSet": {"enabled": False}})
    d = desired(ic.compose(x, ic.inputs(ic.klass()), copy.deepcopy(observed)))
    assert "release-lws" not in d and "usage-helm-pc-release-lws" not in d
    assert_every_user_holds_its_config(d)


# A ModelCache keeps its objects on a cluster the selector no longer lists; but once that
# InferenceCluster is deleted, its provider configs wait for those objects, so keeping them
# would hold the configs forever. The cache asks for the cluster by name to tell the two apart.

def _cache_on_two_clusters() -> dict:
    first = mc.go(mc.cache(), [mc.cluster("prod-a"), mc.cluster("prod-b")])
    return mc.observed_after(first, job=mc.job_status(Complete="done"))


def _cache(required: dict, observed: dict):
    return run(mc.FN, request(mc.cache(), observed=observed, required=required))


def test_model_cache_asks_for_an_unlisted_cluster_by_name_and_keeps_it_until_known():
    observed = _cache_on_two_clusters()
    rsp = _cache({"clusters": [mc.cluster("prod-a")]}, observed)
    sel = rsp.requirements.resources["cluster-prod-b"]
    assert (sel.kind, sel.match_name) == ("InferenceCluster", "prod-b")
    assert sorted(desired(rsp)) == sorted(observed)


def test_model_cache_keeps_everything_on_a_cluster_that_exists_but_is_unselected():
    observed = _cache_on_two_clusters()
    rsp = _cache({"clusters": [mc.cluster("prod-a")], "cluster-prod-b": [mc.cluster("prod-b")]}, observed)
    assert sorted(desired(rsp)) == sorted(observed)
    assert "not listed" in mc.entry(rsp, "prod-b")["message"]


def _on(d: dict, cluster: str, kind: str) -> list[str]:
    return sorted(k for k, o in d.items()
                  if o["kind"] == kind and o["metadata"]["labels"].get("modelplane.ai/cluster") == cluster)


def test_model_cache_drops_a_deleted_clusters_objects_and_their_usages_once_the_objects_are_gone():
    observed = _cache_on_two_clusters()
    objects_b = {o["metadata"]["name"]: o for o in observed.values()
                 if o["kind"] == "Object" and o["metadata"]["labels"]["modelplane.ai/cluster"] == "prod-b"}
    deleted = {"clusters": [mc.cluster("prod-a")], "cluster-prod-b": []}

    # The cluster is gone: its Objects are dropped; each Usage is kept while its Object exists, and
    # the cache asks for exactly the Objects its Usages wait for (not the kept-on-delete namespace).
    rsp = _cache({**deleted, **{f"object-{n}": [o] for n, o in objects_b.items()}}, observed)
    d = desired(rsp)
    assert _on(d, "prod-b", "Object") == [] and len(_on(d, "prod-b", "Usage")) == 3
    asked = {k for k in rsp.requirements.resources if k.startswith("object-")}
    # An Object whose policies delete the remote object has a Usage to wait for; one kept on
    # delete (the namespace: no Delete policy) does not. The token's shell Object deletes.
    deletes = {n for n, o in objects_b.items()
               if {"*", "Delete"} & set(o["spec"].get("managementPolicies", ["*"]))}
    assert "modelcache-qwen3-coder-prod-b-token-copy" in deletes
    assert asked == {f"object-{n}" for n in deletes}
    assert [e["name"] for e in status(rsp)["clusters"]] == ["prod-a"]
    prod_a = {k: o for k, o in d.items() if o["metadata"]["labels"]["modelplane.ai/cluster"] == "prod-a"}
    assert assert_every_user_holds_its_config(prod_a) == 3     # untouched

    # Crossplane no longer observes the dropped Objects; once they do not exist, the Usages go.
    later = {k: o for k, o in observed.items() if k in d}
    d = desired(_cache({**deleted, **{k: [] for k in asked}}, later))
    assert _on(d, "prod-b", "Usage") == [] and _on(d, "prod-a", "Usage")
