"""What is in the images ``make images`` built, seen through podman: the runtime the Dockerfile
describes, the packages the lock pins, the Debian packages it records, nothing more."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from modelplane import paths
from modelplane.e2e import podman

from tests.images import recipe

pytestmark = [pytest.mark.slow, pytest.mark.images]
MAX_BYTES = 400_000_000


def _inspect(ref: str) -> dict:
    return json.loads(podman.run("image", "inspect", ref).stdout)[0]


def _run(ref: str, *args: str, entrypoint: str | None = None, user: str | None = None) -> str:
    flags = ["--rm", "--network=none"] + ([f"--entrypoint={entrypoint}"] if entrypoint else []) \
        + ([f"--user={user}"] if user else [])
    return podman.run("run", *flags, ref, *args).stdout


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_each_image_is_the_dockerfile_runtime_for_its_function(built):
    d = recipe.dockerfile()
    assert sorted(built["functions"]) == sorted(p.name for p in paths.FUNCTIONS.iterdir()
                                                if (p / "package" / "crossplane.yaml").exists())
    for fn, entry in built["functions"].items():
        img = _inspect(entry["ref"])
        assert "sha256:" + img["Id"] == entry["id"], fn
        cfg = img["Config"]
        assert cfg["Entrypoint"] == d["run"]["entrypoint"]
        assert cfg["User"] == d["run"]["user"]
        assert set(cfg["ExposedPorts"]) == {f"{d['run']['expose']}/tcp"}
        assert f"MODELPLANE_FUNCTION={fn}" in cfg["Env"]


def test_python_is_debians_and_the_venv_is_the_lock(built):
    ref = built["functions"]["compose-model-deployment"]["ref"]
    version = _run(ref, "-c", "import sys; print(sys.version.split()[0], sys.executable)",
                   entrypoint="/venv/bin/python").split()
    assert version[0] == built["python"] and version[0].startswith("3.11.")   # distroless python3-debian12: 3.11
    assert version[1] == "/venv/bin/python"
    inside = set(_run(ref, "/etc/modelplane/python-packages.txt", entrypoint="/bin/cat").split())
    locked = subprocess.run([str(paths.ROOT / ".venv/bin/uv"), "export", "--locked", "--no-dev", "--no-hashes",
                             "--no-emit-project", "--no-header", "--no-annotate", "--format", "requirements-txt"],
                            cwd=paths.ROOT, capture_output=True, text=True, check=True).stdout
    want = {_norm(line.split(";")[0].split("==")[0]) + "==" + line.split(";")[0].split("==")[1].strip()
            for line in locked.splitlines() if "==" in line}
    got = {_norm(p.split("==")[0]) + "==" + p.split("==")[1] for p in inside if not p.startswith("modelplane==")}
    assert got == want
    assert "modelplane==" + built["version"].lstrip("v") in inside


def test_debian_packages_are_recorded_and_there_is_no_toolchain_or_apt(built):
    ref = built["functions"]["compose-inference-class"]["ref"]
    listed = _run(ref, "/etc/modelplane/debian-packages.txt", entrypoint="/bin/cat")
    names = {line.split("\t")[0] for line in listed.splitlines()}
    assert {"python3", "python3.11", "libstdc++6", "libc6"} <= names
    assert not names & {"gcc", "gcc-12", "cpp", "cpp-12", "make", "apt", "perl", "python3-pip", "python3-venv"}
    assert listed == Path(built["debian_packages"]).read_text()
    leftovers = _run(ref, "-c", "find /var/lib/apt/lists /var/cache/apt /usr/share/man /usr/share/locale -mindepth 1 2>/dev/null | wc -l",
                     entrypoint="/bin/sh").strip()
    assert leftovers == "0"
    assert built["size_bytes"] <= MAX_BYTES, f"{built['size_bytes'] / 1e6:.0f} MB"


def test_runs_as_nonroot_and_as_crossplanes_pod_user(built):
    ref = built["functions"]["compose-model-service"]["ref"]
    assert _run(ref, "-c", "id -u; id -g", entrypoint="/bin/sh").split() == ["65532", "65532"]
    # Crossplane's Deployment runtime runs function pods as 2000:2000 (runtime.go RunAsUser).
    out = _run(ref, "--help", user="2000:2000")
    assert "--tls-certs-dir" in out and "--insecure" in out


def test_the_engine_observer_runs_from_the_replica_image(built):
    # Workload clusters run the observer from compose-model-replica's package image
    # (platform/engine_observer.DEFAULT_IMAGE) with COMMAND: that command must exist there.
    from modelplane.platform import engine_observer
    assert engine_observer.DEFAULT_IMAGE.split("/")[-1].startswith("compose-model-replica:")
    ref = built["functions"]["compose-model-replica"]["ref"]
    out = _run(ref, *engine_observer.COMMAND[1:], "--help", entrypoint=engine_observer.COMMAND[0])
    assert "usage: modelplane engine-observer" in out
