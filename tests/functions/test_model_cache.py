"""compose-model-cache, in-process through the real runtime (and once over gRPC)."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.validate.upstream import assert_valid

from tests.functions.caches import FN, NS, cache, cluster, entry, go, job_status, observed_after
from tests.support import call, conditions, desired, fatal, request, serve_process, status

# --- composed objects -------------------------------------------------------------


def test_composes_namespace_pvc_token_and_job_per_cluster_and_all_validate():
    rsp = go(cache(), [cluster("prod-a"), cluster("prod-b")])
    assert fatal(rsp) is None
    objects = {n: o for n, o in desired(rsp).items() if o["kind"] == "Object"}
    names = sorted(objects)
    assert [n for n in names if n.endswith("prod-a") or "prod-a-" in n] == [
        next(n for n in names if n.startswith("job-prod-a-")), "namespace-prod-a", "pvc-prod-a",
        "tokencopy-prod-a", "tokendata-prod-a"]
    for obj in desired(rsp).values():
        assert_valid(obj)
        assert obj["metadata"]["namespace"] == NS
    for obj in objects.values():
        assert obj["spec"]["providerConfigRef"] == {"kind": "ClusterProviderConfig",
                                                    "name": obj["metadata"]["labels"]["modelplane.ai/cluster"]}
    # Every Object that deletes its remote object holds its cluster's provider config (the
    # kept-on-delete namespace and the token's data Object need none); the rest of desired is
    # exactly those Usages.
    usages = [o for o in desired(rsp).values() if o["kind"] == "Usage"]
    assert sorted(u["spec"]["by"]["resourceRef"]["name"] for u in usages) == sorted(
        o["metadata"]["name"] for n, o in objects.items() if not n.startswith(("namespace-", "tokendata-")))
    assert len(usages) + len(objects) == len(desired(rsp))
    for u in usages:
        assert u["spec"]["of"]["resourceRef"] == {"name": u["metadata"]["labels"]["modelplane.ai/cluster"],
                                                  "namespace": ""}


def test_pvc_is_rwx_sized_on_the_cluster_storage_class():
    pvc = desired(go(cache(), [cluster("prod-a", storage_class="efs")]))["pvc-prod-a"]
    m = pvc["spec"]["forProvider"]["manifest"]
    assert m["metadata"] == {"name": "modelcache-qwen3-coder", "namespace": NS, "labels": m["metadata"]["labels"]}
    assert m["spec"] == {"accessModes": ["ReadWriteMany"], "storageClassName": "efs",
                         "resources": {"requests": {"storage": "960Gi"}}}


def test_namespace_object_is_never_deleted_by_us():
    ns = desired(go(cache(), [cluster("prod-a")]))["namespace-prod-a"]
    assert "Delete" not in ns["spec"]["managementPolicies"]
    assert ns["spec"]["forProvider"]["manifest"]["metadata"]["name"] == NS


def test_token_is_copied_by_reference_and_never_appears_in_output():
    rsp = go(cache(), [cluster("prod-a")])
    shell, data = desired(rsp)["tokencopy-prod-a"], desired(rsp)["tokendata-prod-a"]
    assert "references" not in shell["spec"]
    assert data["spec"]["references"] == [{
        "patchesFrom": {"apiVersion": "v1", "kind": "Secret", "name": "huggingface", "namespace": NS,
                        "fieldPath": "data.token"},
        "toFieldPath": "data.token"}]
    for obj in (shell, data):
        assert "data" not in obj["spec"]["forProvider"]["manifest"]
        assert obj["spec"]["forProvider"]["manifest"]["metadata"]["name"] == "modelcache-qwen3-coder-hf-token"
    job = next(o for n, o in desired(rsp).items() if n.startswith("job-"))
    env = job["spec"]["forProvider"]["manifest"]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "modelcache-qwen3-coder-hf-token",
                                                                "key": "token"}}} in env


def test_no_token_means_no_secret_and_no_hf_token_env():
    rsp = go(cache(token=False), [cluster("prod-a")])
    assert not [n for n in desired(rsp) if n.startswith(("token", "usage-kubernetes-pc-token"))]
    assert "HF_TOKEN" not in json.dumps(desired(rsp))


def test_job_is_idempotent_pinned_and_kept_after_completion():
    job = next(o for n, o in desired(go(cache(), [cluster("prod-a")])).items() if n.startswith("job-"))
    m = job["spec"]["forProvider"]["manifest"]
    container = m["spec"]["template"]["spec"]["containers"][0]
    script = container["command"][-1]
    assert script.index("MODELPLANE_MARKER") < script.index("pip install")  # the marker is checked first
    assert ":" in container["image"] and not container["image"].endswith(":latest")
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["MODELPLANE_REPO"] == "Qwen/Qwen3-Coder-480B-A35B-Instruct" and env["MODELPLANE_REVISION"] == "main"
    assert "==" in env["MODELPLANE_HF_HUB"]
    assert "ttlSecondsAfterFinished" not in m["spec"] and m["spec"]["backoffLimit"] > 0
    assert job["spec"]["readiness"]["policy"] == "DeriveFromCelQuery"


def test_new_revision_replaces_the_job():
    first = go(cache(revision="main"), [cluster("prod-a")])
    observed = observed_after(first, job=job_status(succeeded=1, Complete="done"))
    rsp = go(cache(revision="v2"), [cluster("prod-a")], observed)
    old = next(n for n in observed if n.startswith("job-"))
    new = [n for n in desired(rsp) if n.startswith("job-")]
    assert old not in desired(rsp) and len(new) == 1 and new[0] != old
    assert entry(rsp, "prod-a")["phase"] == "Pending"


# --- phases --------------------------------------------------------------------------


@dataclass
class Phase:
    name: str
    job: dict | None
    pvc: str | None
    want: str
    message: str = ""


PHASES = [
    Phase("just composed: Pending, PVC not bound", None, None, "Pending", "PVC to bind"),
    Phase("PVC bound, Job not started: Pending", job_status(), "Bound", "Pending", "Job to start"),
    Phase("Job active: Hydrating", job_status(active=1), "Bound", "Hydrating"),
    Phase("Job Complete condition: Ready", job_status(Complete="done"), "Bound", "Ready"),
    Phase("succeeded without condition yet: Ready", job_status(succeeded=1), "Bound", "Ready"),
    Phase("Job Failed: Failed with its message", job_status(Failed="Job has reached the specified backoff limit"),
          "Bound", "Failed", "Job has reached the specified backoff limit"),
]


@pytest.mark.parametrize("case", PHASES, ids=lambda c: c.name)
def test_phase_follows_the_remote_job(case: Phase):
    first = go(cache(), [cluster("prod-a")])
    rsp = go(cache(), [cluster("prod-a")], observed_after(first, job=case.job, pvc_phase=case.pvc))
    e = entry(rsp, "prod-a")
    assert e["phase"] == case.want
    assert case.message in e.get("message", "")
    assert e["pvcName"] == "modelcache-qwen3-coder" and e["storageClassName"] == "modelplane-rwx"
    job = next(n for n in desired(rsp) if n.startswith("job-"))
    assert rsp.desired.resources[job].ready == (fnv1.READY_TRUE if case.want == "Ready" else fnv1.READY_FALSE)


@pytest.mark.parametrize("token, check", [
    (True, "that the token in spec.source.huggingFace.tokenSecretRef has access to it"),
    (False, "that spec.source.huggingFace.tokenSecretRef names a token with access to it"),
])
def test_failed_job_names_what_it_downloaded_and_how_to_rerun_it(token, check):
    # A Job's Failed condition says only that its pods failed; a fixed token keeps the Job's
    # name (it hashes repo@revision alone), so the message must not promise a new Job for it.
    first = go(cache(token=token), [cluster("prod-a")])
    failed = job_status(Failed="Job has reached the specified backoff limit")
    msg = entry(go(cache(token=token), [cluster("prod-a")], observed_after(first, job=failed)), "prod-a")["message"]
    job = next(o for n, o in desired(first).items() if n.startswith("job-"))["spec"]["forProvider"]["manifest"]
    assert msg.startswith(f"hydration Job {NS}/{job['metadata']['name']} for "
                          "Qwen/Qwen3-Coder-480B-A35B-Instruct@main failed "
                          "(Job has reached the specified backoff limit); its pod logs say why."), msg
    assert check in msg
    assert msg.endswith("A new repo or revision composes a new Job; after any other fix, delete this Job "
                        "on the cluster and it runs again"), msg


def test_ready_when_every_matched_cluster_is_ready():
    clusters = [cluster("prod-a"), cluster("prod-b")]
    first = go(cache(), clusters)
    done = observed_after(first, job=job_status(Complete="done"), pvc_phase="Bound")
    rsp = go(cache(), clusters, done)
    assert status(rsp)["readyClusters"] == 2
    assert rsp.desired.composite.ready == fnv1.READY_TRUE
    assert conditions(rsp)["Hydrated"].reason == "Available"
    # One cluster still hydrating: not Ready, and the condition says which.
    half = {n: o for n, o in done.items() if "prod-b" not in n}
    half.update({n: o for n, o in observed_after(first, job=job_status(active=1)).items() if "prod-b" in n})
    rsp = go(cache(), clusters, half)
    assert status(rsp)["readyClusters"] == 1 and rsp.desired.composite.ready == fnv1.READY_FALSE
    assert "prod-b: Hydrating" in conditions(rsp)["Hydrated"].message


@pytest.mark.parametrize("c,missing", [
    (cluster("prod-a", storage_class=None), "storageClassName"),
    (cluster("prod-a", provider_config=False), "providerConfigName"),
])
def test_cluster_without_storage_class_or_provider_config_is_reported_not_skipped(c, missing):
    rsp = go(cache(), [c])
    assert desired(rsp) == {}
    e = entry(rsp, "prod-a")
    assert e["phase"] == "Pending" and missing in e["message"]
    assert rsp.desired.composite.ready == fnv1.READY_FALSE


def test_no_matching_cluster_is_not_ready():
    rsp = go(cache(), [])
    assert status(rsp)["clusters"] == [] and rsp.desired.composite.ready == fnv1.READY_FALSE
    assert conditions(rsp)["Hydrated"].reason == "NoMatchingClusters"


# --- nothing lost ---------------------------------------------------------------------


def test_clusters_not_fetched_keeps_children_and_status():
    first = go(cache(), [cluster("prod-a")])
    observed = observed_after(first, job=job_status(Complete="done"))
    xr = cache()
    xr["status"] = {"readyClusters": 1, "clusters": [{"name": "prod-a", "phase": "Ready"}]}
    rsp = go(xr, None, observed)
    assert sorted(desired(rsp)) == sorted(observed)
    assert status(rsp)["readyClusters"] == 1
    assert conditions(rsp)["Hydrated"].reason == "WaitingForInputs"
    assert fatal(rsp) is None


def test_cluster_missing_from_the_list_keeps_its_objects():
    first = go(cache(), [cluster("prod-a"), cluster("prod-b")])
    observed = observed_after(first, job=job_status(Complete="done"))
    rsp = go(cache(), [cluster("prod-a")], observed)
    assert sorted(desired(rsp)) == sorted(observed)
    e = entry(rsp, "prod-b")
    assert e["phase"] == "Ready" and "not listed" in e["message"]


def test_storage_class_briefly_missing_keeps_the_cache():
    first = go(cache(), [cluster("prod-a")])
    observed = observed_after(first, job=job_status(Complete="done"))
    rsp = go(cache(), [cluster("prod-a", storage_class=None)], observed)
    assert sorted(desired(rsp)) == sorted(observed)
    assert entry(rsp, "prod-a")["phase"] == "Ready"


def test_requirement_uses_the_cluster_selector():
    rsp = go(cache(selector={"tier": "frontier"}), None)
    sel = rsp.requirements.resources["clusters"]
    assert (sel.kind, dict(sel.match_labels.labels)) == ("InferenceCluster", {"tier": "frontier"})


# --- over real gRPC --------------------------------------------------------------------


def test_serves_over_grpc():
    req = request(cache(), required={"clusters": [cluster("prod-a")]})
    with serve_process(FN, "--insecure") as address:
        rsp = call(address, req)
    assert fatal(rsp) is None
    assert "pvc-prod-a" in desired(rsp)
    assert entry(rsp, "prod-a")["phase"] == "Pending"
