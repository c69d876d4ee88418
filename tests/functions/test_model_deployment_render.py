"""compose-model-deployment through `modelplane render` (crossplane render parity):
the seed qwen-demo against the platform classes and one L4 cluster, end to end
through a real `modelplane serve` subprocess."""
from __future__ import annotations

import subprocess
import sys

import yaml
from modelplane import paths
from modelplane.validate import Validator

CLUSTER = {
    "apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster",
    "metadata": {"name": "edge-l4"},
    "status": {"providerConfigName": "edge-l4", "pools": [{"name": "l4", "class": "gke-l4-1x-g2", "nodes": 1}],
               "gateway": {"address": "203.0.113.10", "name": "modelplane", "namespace": "modelplane-system"},
               "conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]},
}


def test_render_places_qwen_demo_on_the_l4_cluster(tmp_path):
    required = tmp_path / "required.yaml"
    classes = (paths.EXAMPLES / "platform" / "inference-classes.yaml").read_text()
    required.write_text(classes + "\n---\n" + yaml.safe_dump(CLUSTER))
    out = subprocess.run(
        [sys.executable, "-m", "modelplane.cli", "render", str(paths.EXAMPLES / "ml-team" / "qwen-demo.yaml"),
         str(paths.APIS / "modeldeployments" / "composition.yaml"), str(paths.EXAMPLES / "functions.yaml"),
         "--required-resources", str(required)],
        capture_output=True, text=True, timeout=120, check=True,
    )
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    xr = next(d for d in docs if d["kind"] == "ModelDeployment")
    replica = next(d for d in docs if d["kind"] == "ModelReplica")
    assert xr["status"]["replicas"]["scheduled"] == 1
    assert replica["metadata"]["name"] == "qwen-demo-0-edge-l4"
    assert replica["spec"]["engines"][0]["members"][0]["pool"] == "l4"
    assert replica["spec"]["order"] == "/ml-team/qwen-demo/00000"  # no creationTimestamp under render
    clean = {k: v for k, v in replica.items() if k != "status"}
    clean["metadata"] = {k: v for k, v in replica["metadata"].items() if k in ("name", "namespace", "labels")}
    assert Validator.from_paths([paths.APIS]).validate_document(clean) == []
