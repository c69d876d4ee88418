"""Every example manifest passes admission; the fleet is a faithful copy of
platform/ and ml-team/ and covers every source; the seed manifests are kept."""
from __future__ import annotations

import collections

import pytest
from modelplane import paths

from tests.apis import files


@pytest.fixture(scope="module")
def validator():
    from modelplane.validate import Validator

    return Validator.from_paths([paths.APIS])


@pytest.mark.parametrize("path", files.example_files(), ids=lambda p: str(p.relative_to(paths.EXAMPLES)))
def test_example_validates(validator, path):
    for doc in files.docs(path):
        if doc.get("apiVersion") != "modelplane.ai/v1alpha1":
            continue
        findings = validator.validate_document(doc, source=str(path))
        assert [f"{f.path}: {f.message}" for f in findings] == [], path


def test_fleet_is_a_copy_of_platform_and_ml_team():
    fleet = paths.EXAMPLES / "fleet"
    for sub in ("platform", "ml-team"):
        for src in sorted((paths.EXAMPLES / sub).glob("*.yaml")):
            copy = fleet / src.name
            assert copy.is_file(), f"copy {src} into examples/fleet/"
            assert copy.read_text() == src.read_text(), f"examples/fleet/{src.name} differs from {src}"


def test_fleet_covers_sources_classes_and_gateway():
    kinds = collections.defaultdict(list)
    for path in sorted((paths.EXAMPLES / "fleet").glob("*.yaml")):
        for doc in files.docs(path):
            kinds[doc["kind"]].append(doc)
    sources = {c["spec"]["cluster"]["source"] for c in kinds["InferenceCluster"]}
    from modelplane.platform.cluster import SOURCES

    assert sources == set(SOURCES), "examples/fleet has one cluster of every source"
    assert len(kinds["InferenceClass"]) >= 4
    assert [g["metadata"]["name"] for g in kinds["InferenceGateway"]] == ["default"]
    classes = {c["metadata"]["name"] for c in kinds["InferenceClass"]}
    for cluster in kinds["InferenceCluster"]:
        for pool in cluster["spec"]["nodePools"]:
            assert pool["class"] in classes, f"{cluster['metadata']['name']}: unknown class {pool['class']}"
    # The multi-node cache must target a cluster that has the H200 pool qwen3-coder needs.
    [cache] = [c for c in kinds["ModelCache"] if c["metadata"]["name"] == "qwen3-coder"]
    wanted = cache["spec"]["clusterSelector"]["matchLabels"]
    targets = [c for c in kinds["InferenceCluster"] if wanted.items() <= c["metadata"].get("labels", {}).items()]
    assert [p["class"] for c in targets for p in c["spec"]["nodePools"] if p["nodeCount"] >= 2
            and p["class"] == "h200-8x-ib"], "qwen3-coder's cache must target a cluster with 2+ H200 nodes"


SEED_NAMES = {
    "qwen-demo.yaml": ("ModelDeployment", "qwen-demo"),
    "model-service.yaml": ("ModelService", "qwen"),
    "model-deployment.yaml": ("ModelDeployment", "qwen3-8b"),
    "model-deployment-multinode.yaml": ("ModelDeployment", "qwen3-coder"),
}


@pytest.mark.parametrize("name", sorted(SEED_NAMES))
def test_seed_manifests_present(name):
    [doc] = files.docs(paths.EXAMPLES / "ml-team" / name)
    assert (doc["kind"], doc["metadata"]["name"], doc["metadata"]["namespace"]) == (*SEED_NAMES[name], "ml-team")


def test_seed_comments_kept():
    text = (paths.EXAMPLES / "ml-team" / "model-deployment-multinode.yaml").read_text()
    assert "# Multi-node engines require a ModelCache" in text
    assert "--master-addr=$(MODELPLANE_LEADER_ADDRESS)" in text
