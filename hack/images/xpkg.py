"""Build the Crossplane packages a release pushes, into one folder (make xpkg):

    .venv/bin/python hack/images/xpkg.py _output
    .venv/bin/python hack/images/xpkg.py --push xpkg.crossplane.io/modelplane _output   (make xpkg-push)

- ``<function>-v<version>.xpkg`` for each of the eight functions: the real
  ``crossplane xpkg build`` of ``functions/<function>/package`` with its runtime
  image embedded (``--embed-runtime-image-tarball``: the image ``make images``
  built, as a ``docker save`` tarball), so the package is also the image
  Crossplane's package runtime runs;
- ``modelplane-v<version>.xpkg``: the Configuration (``crossplane.yaml`` and
  ``apis/``), written by ``modelplane.e2e.packages.xpkg_tarball`` because the
  v2.2 CLI drops XRD fields it does not know (``subresources.scale``).

One version for all: ``project.version`` in ``pyproject.toml`` (``v`` + it);
``crossplane.yaml``'s constraints on the functions must admit it. Also writes
``packages.json`` (file -> package path, tag, sha256, inputs) beside them; a
function package whose inputs (its image ID, its package files, the CLI) and
file are unchanged is kept, not built again.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml
from modelplane import paths, semver
from modelplane.e2e import ocilayout, packages, podman, upstream

FUNCTION_PREFIX = "xpkg.crossplane.io/modelplane/"


def check_constraints(version: str) -> None:
    cfg = yaml.safe_load((paths.ROOT / "crossplane.yaml").read_text())
    for dep in packages.dependencies(cfg):
        if dep["kind"] == "Function" and dep["package"].startswith(FUNCTION_PREFIX):
            floor = packages.floor(dep.get("version", ""), f"crossplane.yaml dependsOn {dep['package']}")
            if semver.Version.parse(floor.lstrip("v")) > semver.Version.parse(version.lstrip("v")):
                raise SystemExit(f"xpkg: crossplane.yaml wants {dep['package']} {dep['version']}, "
                                 f"but this build is {version} (pyproject.toml project.version)")


def _sha256(path: Path) -> str:
    return ocilayout.file_sha256(path)


def image_of(built: dict, function: str) -> ocilayout.Image:
    entry = built["functions"][function]
    config = json.dumps(entry["config"], sort_keys=True, separators=(",", ":")).encode()
    layers = tuple((Path(built["layer_files"][k]), built["layers"][k]) for k in ("base", "venv"))
    image = ocilayout.Image(config, layers, (entry["ref"],))
    if image.id != entry["id"]:
        raise SystemExit(f"xpkg: images.json is inconsistent for {function}: run `make images` again")
    return image


def push(out: Path, prefix: str) -> int:
    """``crossplane xpkg push`` every package ``packages.json`` lists to ``<prefix>/<name>:<tag>``
    (credentials: the Docker config the CLI reads, ``$DOCKER_CONFIG/config.json``)."""
    crossplane = upstream.binary("crossplane")
    index = json.loads((out / "packages.json").read_text())
    for name, entry in sorted(index.items()):
        if _sha256(out / name) != entry["sha256"]:
            raise SystemExit(f"xpkg: {out / name} is not the file packages.json lists: run `make xpkg`")
        ref = f"{prefix.rstrip('/')}/{entry['package'].rsplit('/', 1)[1]}:{entry['tag']}"
        packages._run([crossplane, "xpkg", "push", "-f", out / name, ref])
        print(f"::: pushed {name} -> {ref}")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--push"]:
        return push(Path(argv[2] if len(argv) > 2 else "_output").resolve(), argv[1])
    out = Path(argv[0] if argv else "_output").resolve()
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    version = "v" + packages._project_version()
    check_constraints(version)
    built = podman.manifest()
    if built["version"] != version:
        raise SystemExit(f"xpkg: the images are {built['version']}, the project {version}: run `make images`")
    crossplane = upstream.binary("crossplane")
    before = json.loads((out / "packages.json").read_text()) if (out / "packages.json").exists() else {}
    index = {}
    with tempfile.TemporaryDirectory(prefix="mp-xpkg-") as tmp:
        work = Path(tmp)
        empty = work / "no-examples"
        empty.mkdir()
        for function in sorted(built["functions"]):
            root = paths.FUNCTIONS / function / "package"
            dest = out / f"{function}-{version}.xpkg"
            inputs = hashlib.sha256(json.dumps([built["functions"][function]["id"], str(crossplane), [
                (p.name, p.read_text()) for p in sorted(root.glob("*.yaml"))]]).encode()).hexdigest()
            old = before.get(dest.name) or {}
            if old.get("inputs") == inputs and dest.exists() and _sha256(dest) == old.get("sha256"):
                index[dest.name] = old
                print(f"::: {dest.name}: cached")
                continue
            archive = work / f"{function}.tar"
            ocilayout.write_archive(archive, [image_of(built, function)])
            packages._run([crossplane, "xpkg", "build", "-f", root, "-o", dest, "--examples-root", empty,
                           "--embed-runtime-image-tarball", archive])
            archive.unlink()
            index[dest.name] = {"package": FUNCTION_PREFIX + function, "tag": version, "inputs": inputs}
        staged = packages.stage_configuration(work / "configuration")
        dest = out / f"modelplane-{version}.xpkg"
        dest.write_bytes(packages.xpkg_tarball(staged))
        shutil.rmtree(staged)
        index[dest.name] = {"package": packages.CONFIGURATION, "tag": version}
    for name, entry in index.items():
        entry["sha256"] = _sha256(out / name)
        print(f"::: {name}  {(out / name).stat().st_size / 1e6:.0f} MB  sha256:{entry['sha256'][:16]}...")
    (out / "packages.json").write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
    print(f"::: {len(index)} packages in {out} ({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
