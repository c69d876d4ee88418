"""Differences real Crossplane showed against ``modelplane simulate``, kept fixed (no cluster needed)."""
from __future__ import annotations

from modelplane import paths
from modelplane.validate.admission import load_dir


def test_loaded_xrs_carry_the_defaults_the_api_server_applies():
    """The API server defaults a ModelDeployment's pod template from the XRD schema; the function
    copies the template into the Deployment it composes, so simulate must start from the same."""
    xrs, _ = load_dir(paths.EXAMPLES / "ml-team")
    pd = next(x for x in xrs if x["kind"] == "ModelDeployment" and x["metadata"]["name"] == "qwen3-32b-pd")
    decode = next(e for e in pd["spec"]["engines"] if e["name"] == "decode")
    container = decode["members"][0]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["scheme"] == "HTTP"
    refs = [e["valueFrom"]["fieldRef"] for e in container.get("env") or [] if "fieldRef" in (e.get("valueFrom") or {})]
    assert refs and all(r["apiVersion"] == "v1" for r in refs)
