"""compose-inference-cluster end to end: a real gRPC server, and render of the examples.

``modelplane render`` runs the Composition's pipeline with the function as
a real subprocess, through the requirements loop (the classes come from
examples/platform/inference-classes*.yaml via -e).
"""
from __future__ import annotations

import io

import pytest
import yaml
from modelplane.cli import render as render_cli
from modelplane.render.runners import FunctionPool
from modelplane.validate.upstream import assert_valid

from tests.functions.clusters import FN, inputs, klass, xr
from tests.support import ROOT, call, desired, fatal, request, serve_process, status


def test_over_real_grpc():
    with serve_process(FN, "--insecure") as address:
        ok = call(address, request(xr("EKS"), required=inputs(klass())))
        bad = call(address, request(xr("EKS"), required=inputs(klass(provisioning=False))))
    assert fatal(ok) is None and "nodepool-l4" in desired(ok)
    assert status(ok)["providerConfigName"] == "prod-a"
    assert fatal(bad).startswith("spec.nodePools[0].class:")


@pytest.fixture(scope="module")
def pool():
    """One function subprocess for every render in this module."""
    with FunctionPool() as p:
        yield p


def render(example: str, pool: FunctionPool) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    code = render_cli.run([
        str(ROOT / "examples/platform" / example),
        str(ROOT / "apis/inferenceclusters/composition.yaml"),
        str(ROOT / "examples/functions.yaml"),
        "-e", str(ROOT / "examples/platform/inference-classes.yaml"),
        "-e", str(ROOT / "examples/platform/inference-classes-aks.yaml"),
        "--xrd", str(ROOT / "apis/inferenceclusters/definition.yaml"),
    ], stdout=out, stderr=err, pool=pool)
    assert code == 0, err.getvalue()
    return [d for d in yaml.safe_load_all(out.getvalue()) if d]


@pytest.mark.parametrize("example", ["cluster-gke.yaml", "networks/cluster-gke-network.yaml", "cluster-eks.yaml",
                                     "networks/cluster-eks-vpc.yaml", "cluster-aks.yaml", "cluster-existing.yaml"])
def test_render_example_composes_valid_resources_and_every_pool(example, pool):
    xr_doc = yaml.safe_load((ROOT / "examples/platform" / example).read_text())
    docs = render(example, pool)
    rendered_xr, composed = docs[0], docs[1:]
    assert [p["name"] for p in rendered_xr["status"]["pools"]] == [p["name"] for p in xr_doc["spec"]["nodePools"]]
    by_type = {c["type"]: c for c in rendered_xr["status"]["conditions"]}
    assert by_type["InputsResolved"]["status"] == "True", by_type["InputsResolved"]
    assert by_type["Ready"]["status"] == "False"  # nothing is observed yet
    names = {c["metadata"]["annotations"]["crossplane.io/composition-resource-name"] for c in composed}
    assert {"providerconfig-kubernetes", "providerconfig-helm", "gateway", "release-envoy-gateway"} <= names
    if xr_doc["spec"]["cluster"]["source"] != "Existing":
        assert {f"nodepool-{p['name']}" for p in xr_doc["spec"]["nodePools"]} <= names
    for obj in composed:
        assert_valid(obj)


def test_network_variants_simulate_to_ready(tmp_path, pool):
    """The examples not in the fleet (it has cluster-gke, cluster-eks and cluster-aks) reconcile to Ready."""
    import shutil

    from modelplane.simulate.loop import simulate_dir

    for f in ("networks/cluster-eks-vpc.yaml", "networks/cluster-gke-network.yaml", "inference-classes.yaml"):
        shutil.copy(ROOT / "examples/platform" / f, tmp_path / f.rsplit("/", 1)[-1])
    world, outcome = simulate_dir(tmp_path, pool=pool)
    assert outcome.converged
    clusters = {k[2]: s.obj for k, s in world.xrs.items() if k[0] == "InferenceCluster"}
    assert sorted(clusters) == ["eks-us-east-vpc", "gke-europe-west"]
    for name, obj in clusters.items():
        ready = {c["type"]: c["status"] for c in obj["status"]["conditions"]}
        assert ready == {"Ready": "True", "InputsResolved": "True", "Provisioned": "True", "StackReady": "True",
                         "GatewayReady": "True"}, (name, obj["status"]["conditions"])
    eks = world.xrs[("InferenceCluster", "", "eks-us-east-vpc")].composed
    assert "net-vpc" in eks and "usage-net-vpc-by-net-internetgateway" in eks
