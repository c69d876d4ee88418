"""schemas/ is generated from the XRDs and must not go stale; the generated
models read every example of their kind, with Crossplane's extra fields."""
from __future__ import annotations

import pytest
from modelplane import paths
from modelplane.dev import schemagen
from modelplane.schemas import MODELS

from tests.apis import files


def test_schemas_match_the_xrds():
    diffs = schemagen.stale()
    assert diffs == [], "schemas/ is stale, run `make schemas`:\n" + "".join(diffs)[:4000]


def test_one_model_per_xrd_named_after_the_kind():
    kinds = sorted(x["spec"]["names"]["kind"] for x in files.xrds().values())
    assert sorted(MODELS) == kinds
    for kind in kinds:
        assert (paths.ROOT / "schemas" / f"{schemagen.kind_snake(kind)}.py").is_file()


@pytest.mark.parametrize("kind,want", [("ModelDeployment", "model_deployment"), ("InferenceClass", "inference_class")])
def test_kind_snake(kind, want):
    assert schemagen.kind_snake(kind) == want


def test_models_read_examples_and_keep_crossplane_fields():
    seen = set()
    for path in files.example_files():
        for doc in files.docs(path):
            model = MODELS.get(doc["kind"])
            if model is None:
                continue
            seen.add(doc["kind"])
            doc = {**doc, "spec": {**doc["spec"], "crossplane": {"compositionRef": {"name": "x"}}},
                   "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
            obj = model.model_validate(doc)
            dumped = obj.model_dump(exclude_unset=True, by_alias=True)
            assert dumped["spec"]["crossplane"] == {"compositionRef": {"name": "x"}}, path
            assert dumped["status"]["conditions"][0]["type"] == "Ready", path
    assert {"InferenceClass", "InferenceCluster", "InferenceGateway", "ModelDeployment", "ModelService",
            "ModelCache", "ModelEndpoint"} <= seen


def test_model_defaults_come_from_the_xrd():
    md = MODELS["ModelDeployment"].model_validate({"spec": {"engines": [{"name": "e", "members": [
        {"role": "Standalone", "template": {"spec": {"containers": [{"name": "engine", "image": "i"}]}}}]}]}})
    assert (md.apiVersion, md.kind, md.spec.replicas, md.spec.engines[0].copies) == (
        "modelplane.ai/v1alpha1", "ModelDeployment", 1, 1)
