"""End to end: `modelplane render` over the ModelReplica Composition, functions as real gRPC servers."""
from __future__ import annotations

from modelplane.validate.upstream import assert_valid

from tests.functions.render import render
from tests.functions.replicas import pd


def test_render_prefill_decode_replica(tmp_path):
    docs = render(tmp_path, pd(), "modelreplicas")
    objects = [d for d in docs if d["kind"] == "Object"]
    kinds = sorted({o["spec"]["forProvider"]["manifest"]["kind"] for o in objects})
    assert kinds == ["ConfigMap", "Deployment", "HTTPRoute", "InferencePool", "Namespace",
                     "ResourceClaimTemplate", "Role", "RoleBinding", "Service", "ServiceAccount"]
    for o in objects:
        assert_valid(o["spec"]["forProvider"]["manifest"])
    assert docs[0]["status"]["rewritePath"] == "/ml-team/qwen3-8b-0-prod-a/"
