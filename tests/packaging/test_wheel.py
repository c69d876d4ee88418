"""The wheel is whole: built once, installed into a fresh venv, used from a folder outside the checkout.

This is the check that catches a package or data file missing from pyproject.toml:
every command runs the installed ``modelplane`` (asserted: its ``__file__`` is in the
temporary venv), so nothing falls back to the source tree. Third-party packages are
reused from the test's own environment through a .pth line (offline and fast); the
wheel itself is installed with ``uv pip install --no-deps --offline``.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.support import ROOT, call, desired, fatal, request, wait_for_address

# What the wheel is built from; everything else in the checkout stays out of the build.
SOURCES = ("pyproject.toml", "README.md", "lib", "schemas", "functions", "apis")
BUILD = "import sys; from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))"
# One build per run: under `make test` (xdist --dist loadgroup) every test here goes to one worker.
pytestmark = pytest.mark.xdist_group("wheel")


@dataclass
class Installed:
    wheel: Path
    src: Path  # the copy the wheel was built from
    venv: Path
    work: Path  # an unrelated folder holding copies of the examples

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.venv / "bin" / "modelplane"), *args], cwd=self.work, env=_env(self.venv),
                              capture_output=True, text=True, timeout=timeout, check=False)

    def package(self) -> Path:
        site = subprocess.run([str(self.venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        return Path(site) / "modelplane"


def _env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MODELPLANE_CRDS", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    src, out, venv, work = base / "src", base / "dist", base / "venv", base / "work"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in SOURCES:
        path = ROOT / name
        (shutil.copytree(path, src / name, ignore=ignore) if path.is_dir() else
         (src.mkdir(exist_ok=True), shutil.copyfile(path, src / name)))
    built = subprocess.run([sys.executable, "-c", BUILD, str(out)], cwd=src, capture_output=True, text=True,
                           check=False)
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = out / built.stdout.strip().splitlines()[-1]

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    assert uv, "uv not found next to the test's python; `make venv` installs it"
    subprocess.run([uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), "--no-deps", "--offline",
                    str(wheel)], check=True, env=_env(venv))
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # Appended after the venv's own site-packages, so modelplane comes from the wheel.
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "zz_test_deps.pth").write_text("".join(f"{p}\n" for p in sorted(deps)))

    work.mkdir()
    shutil.copytree(ROOT / "examples", work / "examples")
    return Installed(wheel, src, venv, work)


def test_the_wheel_carries_every_module_and_data_file(installed: Installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    src = installed.src
    want = {"modelplane/" + p.relative_to(src / "lib" / "modelplane").as_posix()
            for p in (src / "lib" / "modelplane").rglob("*.py")}
    for folder, patterns in (("schemas", ["*.py", "upstream/**/*"]), ("functions", ["*.py", "*/fn.py", "*/package/*.yaml"]),
                             ("apis", ["*/*.yaml"])):
        want |= {f"modelplane/{folder}/" + p.relative_to(src / folder).as_posix()
                 for pattern in patterns for p in (src / folder).glob(pattern) if p.is_file()}
    missing = sorted(want - names)
    assert missing == [], f"not in the wheel (add the package or data to pyproject.toml [tool.setuptools]): {missing}"
    assert "modelplane/schemas/upstream/SOURCES.md" in names
    # Only the package: no tests, examples or tooling from the checkout.
    assert {n.split("/")[0] for n in names} == {"modelplane", installed.wheel.name.split("-py3")[0] + ".dist-info"}
    assert any(n.startswith("modelplane/schemas/upstream/kubernetes-openapi/") for n in names)


def test_modelplane_runs_from_the_wheel_not_the_checkout(installed: Installed):
    got = subprocess.run([str(installed.venv / "bin" / "python"), "-c",
                          "import modelplane, modelplane.paths as p; print(modelplane.__file__); print(p.crds_dir())"],
                         cwd=installed.work, env=_env(installed.venv), capture_output=True, text=True, check=True)
    module, crds = got.stdout.split()
    assert Path(module).is_relative_to(installed.venv), module
    assert Path(crds) == installed.package() / "schemas" / "upstream"
    assert (Path(crds) / "gateway-api" / "gateway.networking.k8s.io_httproutes.yaml").is_file()


def test_validate_the_examples(installed: Installed):
    got = installed.run("validate", "examples")
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr
    summary = got.stdout.strip().splitlines()[-1]
    m = re.fullmatch(r"Total (\d+) resources: 0 missing schemas, (\d+) success cases, 0 failure cases", summary)
    assert m and m[1] == m[2] and int(m[1]) > 20, summary


def test_render_a_gateway_and_validate_what_it_composes(installed: Installed):
    # The Composition is the copy inside the installed package: apis/ ships too.
    composition = installed.package() / "apis" / "inferencegateways" / "composition.yaml"
    got = installed.run("render", "examples/platform/inference-gateway.yaml", str(composition),
                        "examples/functions.yaml")
    assert got.returncode == 0, got.stderr
    docs = [d for d in yaml.safe_load_all(got.stdout) if d]
    assert [d["kind"] for d in docs] == ["InferenceGateway", "Gateway", "GatewayClass", "Release"]
    # Composed resources are upstream kinds: validating them needs the vendored CRDs in the wheel.
    (installed.work / "composed.yaml").write_text(yaml.safe_dump_all(docs[1:]))
    checked = installed.run("validate", "composed.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.strip().splitlines()[-1] == \
        "Total 3 resources: 0 missing schemas, 3 success cases, 0 failure cases"


def test_simulate_the_example_fleet(installed: Installed):
    got = installed.run("simulate", "examples/fleet", "--show", "conditions")
    assert got.returncode == 0, got.stderr[-2000:]
    lines = got.stdout.splitlines()
    assert re.fullmatch(r"# \d+ XRs reconciled in \d+ rounds \(fixed point\)", lines[0]), lines[0]
    assert any(line.startswith("InferenceGateway/default  READY=") for line in lines), got.stdout[:2000]
    assert any(line.startswith("ModelDeployment/ml-team/qwen3-8b  READY=") for line in lines), got.stdout[:2000]


def test_serve_answers_run_function(installed: Installed):
    address_file = installed.work / "serve.address"
    proc = subprocess.Popen([str(installed.venv / "bin" / "modelplane"), "serve", "compose-inference-gateway",
                             "--insecure", "--address", "127.0.0.1:0", "--address-file", str(address_file)],
                            cwd=installed.work, env=_env(installed.venv), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        rsp = call(wait_for_address(proc, address_file, 60), request({"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceGateway",
                                                  "metadata": {"name": "default"}, "spec": {}}), timeout=30)
        assert fatal(rsp) is None
        assert {"gateway", "gatewayclass", "release-envoy-gateway"} <= set(desired(rsp))
    finally:
        proc.terminate()
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    assert code in (0, -15), proc.stderr.read()[-2000:]

