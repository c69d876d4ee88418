"""End to end: `modelplane render` of the external-endpoint example."""
from __future__ import annotations

import yaml
from modelplane.validate.upstream import assert_valid

from tests.functions.render import render
from tests.support import ROOT


def test_render_external_endpoint_example(tmp_path):
    xr = next(yaml.safe_load_all((ROOT / "examples" / "ml-team" / "external-endpoint.yaml").read_text()))
    docs = render(tmp_path, xr, "modelendpoints")
    assert docs[0]["status"]["routing"]["backendName"] == "together-qwen3-coder-backend"
    backend = next(d for d in docs if d["kind"] == "Backend")
    assert_valid(backend)
    assert backend["spec"]["endpoints"] == [{"fqdn": {"hostname": "api.together.xyz", "port": 443}}]
