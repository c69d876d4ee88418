"""End to end: `modelplane render` over the ModelReplica Composition (helper shared by the endpoint and service render tests), functions as real gRPC servers."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from modelplane.validate.upstream import assert_valid

from tests.functions import test_model_replica as replica_cases
from tests.support import ROOT

FUNCTIONS = ROOT / "examples" / "functions.yaml"


def render(tmp_path: Path, xr: dict, plural: str, extra: list[dict] | None = None) -> list[dict]:
    xr_file = tmp_path / "xr.yaml"
    xr_file.write_text(yaml.safe_dump(xr))
    argv = [sys.executable, "-m", "modelplane.cli", "render", str(xr_file),
            str(ROOT / "apis" / plural / "composition.yaml"), str(FUNCTIONS)]
    if extra:
        extra_file = tmp_path / "extra.yaml"
        extra_file.write_text(yaml.safe_dump_all(extra))
        argv += ["-e", str(extra_file)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def test_render_prefill_decode_replica(tmp_path):
    docs = render(tmp_path, replica_cases.pd(), "modelreplicas")
    objects = [d for d in docs if d["kind"] == "Object"]
    kinds = sorted({o["spec"]["forProvider"]["manifest"]["kind"] for o in objects})
    assert kinds == ["ConfigMap", "Deployment", "HTTPRoute", "InferencePool", "Namespace",
                     "ResourceClaimTemplate", "Role", "RoleBinding", "Service", "ServiceAccount"]
    for o in objects:
        assert_valid(o["spec"]["forProvider"]["manifest"])
    assert docs[0]["status"]["rewritePath"] == "/ml-team/qwen3-8b-0-prod-a/"
