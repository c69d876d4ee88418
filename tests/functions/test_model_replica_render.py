"""End to end: `modelplane render` over the ModelReplica Composition, functions as real gRPC servers."""
from __future__ import annotations

from modelplane.validate.upstream import assert_valid
from modelplane.workloads import secrets as S

from tests.functions.render import render
from tests.functions.replicas import NAME, NS, engine, member, pd, replica


def test_render_prefill_decode_replica(tmp_path):
    docs = render(tmp_path, pd(), "modelreplicas")
    objects = [d for d in docs if d["kind"] == "Object"]
    kinds = sorted({o["spec"]["forProvider"]["manifest"]["kind"] for o in objects})
    assert kinds == ["ConfigMap", "Deployment", "HTTPRoute", "InferencePool", "Namespace",
                     "ResourceClaimTemplate", "Role", "RoleBinding", "Service", "ServiceAccount"]
    for o in objects:
        assert_valid(o["spec"]["forProvider"]["manifest"])
    assert docs[0]["status"]["rewritePath"] == "/ml-team/qwen3-8b-0-prod-a/"


def test_render_copies_a_secret_given_as_a_required_resource(tmp_path):
    """`modelplane render -e secrets.yaml`: a Secret the pods read is found, copied, and its value stays out."""
    xr = replica([engine(members=[member(args=["--model=x"], env=[
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "huggingface", "key": "token"}}}])])])
    value = "aGZfbm90LWEtcmVhbC10b2tlbg=="
    given = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "huggingface", "namespace": NS},
             "type": "Opaque", "data": {"token": value}}
    docs = render(tmp_path, xr, "modelreplicas", extra=[given])
    copies = [d for d in docs if d["kind"] == "Object" and S.is_copy(d)]
    assert sorted(c["metadata"]["name"] for c in copies) == sorted([S.copy_name(NAME, "huggingface"),
                                                                    S.data_name(NAME, "huggingface")])
    (found,) = [c for c in docs[0]["status"]["conditions"] if c["type"] == S.SECRETS_FOUND]
    assert found["status"] == "True"
    assert value not in str(docs)

    missing = render(tmp_path, xr, "modelreplicas")
    (found,) = [c for c in missing[0]["status"]["conditions"] if c["type"] == S.SECRETS_FOUND]
    assert (found["status"], found["reason"]) == ("False", "NotFound")
