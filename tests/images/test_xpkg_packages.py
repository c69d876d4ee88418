"""``make xpkg`` wrote the eight Function packages, each embedding its runtime image, and the
Configuration; the real ``crossplane xpkg extract`` reads each one back."""
from __future__ import annotations

import gzip
import json
import subprocess
import tarfile

import pytest
import yaml
from modelplane import paths
from modelplane.e2e import packages

from tests.upstream.need import tool

pytestmark = [pytest.mark.slow, pytest.mark.images]
OUTPUT = paths.ROOT / "_output"


def _index() -> dict:
    path = OUTPUT / "packages.json"
    if not path.exists():
        pytest.fail("no _output/packages.json: run `make xpkg`")
    return json.loads(path.read_text())


def _extract(crossplane, xpkg, tmp_path) -> list[dict]:
    out = tmp_path / (xpkg.stem + ".gz")
    subprocess.run([str(crossplane), "xpkg", "extract", "--from-xpkg", str(xpkg), "-o", str(out)],
                   check=True, capture_output=True, text=True, timeout=300)
    return [d for d in yaml.safe_load_all(gzip.decompress(out.read_bytes())) if d]


def _image(xpkg) -> dict:
    with tarfile.open(xpkg) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))
        assert len(manifest) == 1
        return json.load(tar.extractfile(manifest[0]["Config"]))


def test_eight_function_packages_embed_their_runtime_image(built, tmp_path):
    crossplane = tool("crossplane")["crossplane"]
    index = _index()
    version = built["version"]
    fns = {e["package"].rsplit("/", 1)[1]: name for name, e in index.items() if e["package"] != packages.CONFIGURATION}
    assert sorted(fns) == sorted(built["functions"])
    for fn, name in fns.items():
        assert name == f"{fn}-{version}.xpkg" and index[name]["tag"] == version
        docs = _extract(crossplane, OUTPUT / name, tmp_path)
        assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [("Function", fn)]
        cfg = _image(OUTPUT / name)
        want = built["functions"][fn]["config"]
        assert cfg["config"]["Entrypoint"] == want["config"]["Entrypoint"]
        assert cfg["config"]["User"] == want["config"]["User"]
        assert f"MODELPLANE_FUNCTION={fn}" in cfg["config"]["Env"]
        # The runtime's two layers first, then the package's own.
        assert cfg["rootfs"]["diff_ids"][:2] == [built["layers"]["base"], built["layers"]["venv"]]
        assert any(v == "base" for k, v in cfg["config"]["Labels"].items() if k.startswith("io.crossplane.xpkg"))


def test_the_configuration_package(built, tmp_path):
    crossplane = tool("crossplane")["crossplane"]
    name = f"modelplane-{built['version']}.xpkg"
    assert _index()[name]["package"] == packages.CONFIGURATION
    docs = _extract(crossplane, OUTPUT / name, tmp_path)
    assert docs[0]["kind"] == "Configuration"
    deps = {d["package"] for d in docs[0]["spec"]["dependsOn"] if d["kind"] == "Function"}
    assert deps == {f"xpkg.crossplane.io/modelplane/{fn}" for fn in built["functions"]}
    xrds = [d for d in docs if d["kind"] == "CompositeResourceDefinition"]
    assert len(xrds) == len([d for d in docs if d["kind"] == "Composition"]) == 8
    md = next(x for x in xrds if x["spec"]["names"]["kind"] == "ModelDeployment")
    assert md["spec"]["versions"][0]["subresources"]["scale"]   # what the v2.2 CLI's build would drop
