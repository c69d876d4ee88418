"""The local control plane itself: ready in time, DRA served, kubectl and the REST client reach it."""
from __future__ import annotations

import subprocess

import pytest
from modelplane.kube import ApiError

from tests.upstream.need import tool

pytestmark = pytest.mark.slow  # starts etcd and kube-apiserver: `make e2e`, not `make test`


def test_ready_within_20s(apiserver):
    assert apiserver.ready_seconds <= 20
    assert apiserver.client().request("GET", "/readyz") == "ok"


def test_serves_dra_v1(apiserver):
    kinds = {r["kind"] for r in apiserver.client().request("GET", "/apis/resource.k8s.io/v1")["resources"]}
    assert {"ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass"} <= kinds


def test_kubectl_uses_the_kubeconfig(apiserver):
    kubectl = tool("kubectl")["kubectl"]
    out = subprocess.run([kubectl, "--kubeconfig", apiserver.kubeconfig, "auth", "whoami", "-o",
                          "jsonpath={.status.userInfo.username} {.status.userInfo.groups}"],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.startswith("admin ") and "system:masters" in out


def test_rejection_carries_field_paths(apiserver):
    client = apiserver.client()
    bad = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name", "namespace": "default"}}
    with pytest.raises(ApiError) as err:
        client.create(bad, dry_run=True)
    assert err.value.code == 422
    assert [c.field for c in err.value.causes] == ["metadata.name"]
