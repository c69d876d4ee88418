"""Every package ``crossplane.yaml`` installs, built with the real crossplane CLI and pushed locally.

The Configuration is what a user installs: ``crossplane.yaml`` and ``apis/``
(staged alone: ``xpkg build`` reads every YAML file under its root). Its
``dependsOn`` list is the work list, read from the file, not repeated here:

- our functions: ``functions/<name>/package/crossplane.yaml`` (no runtime
  image: the lab's External runtime runs ``modelplane serve``), or, given the
  folder ``make xpkg`` wrote (``prebuilt``), its ``<name>-v<version>.xpkg``
  with the runtime image embedded, pushed as built;
- provider-kubernetes, provider-helm: their module's ``package/`` folder, at
  the version ``make tools`` built;
- the cloud providers (no source, no cloud here): **stand-ins** under the real
  package path, holding the Provider metadata and the vendored CRDs of the
  kinds Modelplane composes (``schemas/upstream``); nothing runs for them.

Each package is pushed under its own path below the local registry
(``127.0.0.1:<port>/xpkg.crossplane.io/modelplane/compose-model-deployment``);
two ImageConfigs send Crossplane there.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import shutil
import subprocess
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from modelplane import paths
from modelplane.e2e import upstream

CONFIGURATION = "xpkg.crossplane.io/modelplane/modelplane"
# The registries crossplane.yaml names; an ImageConfig rewrites each to the local one.
REGISTRIES = ("xpkg.crossplane.io", "xpkg.upbound.io")
# Real providers built by `make tools`: package path -> tool name.
BUILT_PROVIDERS = {
    "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes": "provider-kubernetes",
    "xpkg.crossplane.io/crossplane-contrib/provider-helm": "provider-helm",
}
# Cloud providers have no source here: a dependency under this prefix gets a stand-in.
STANDIN_PREFIX = "xpkg.upbound.io/upbound/"
# provider-family-<cloud> | provider-<cloud>-<service> | provider-<cloud> (a monolithic provider,
# e.g. provider-nebius: one package serves every kind of the cloud).
_UPJET = re.compile(r"^provider-(?:family-(?P<fcloud>[a-z]+)|(?P<cloud>[a-z]+)-(?P<service>[a-z0-9]+)"
                    r"|(?P<mcloud>[a-z]+))$")
STANDIN_ANNOTATION = "modelplane.ai/lab-stand-in"
_FLOOR = re.compile(r"^\s*>=\s*(v\d+\.\d+\.\d+)\s*$")


@dataclass(frozen=True)
class Package:
    kind: str          # Configuration | Provider | Function
    path: str          # the package path crossplane.yaml names (no tag)
    tag: str           # the version pushed
    root: Path         # the staged package root
    standin: bool = False
    xpkg: Path | None = None   # a package built already (make xpkg): pushed as it is


def dependencies(configuration: Mapping) -> list[dict]:
    return list((configuration.get("spec") or {}).get("dependsOn") or [])


def floor(constraint: str, where: str) -> str:
    """``>=v1.2.3`` -> ``v1.2.3``: the version a package without its own is pushed at."""
    m = _FLOOR.match(constraint or "")
    if not m:
        raise ValueError(f"{where}: version {constraint!r}: the lab pushes packages at a '>=vX.Y.Z' floor; "
                         f"write the constraint that way")
    return m.group(1)


def _copy(src: Path, dst: Path) -> Path:
    """Copy a tree out of the (read-only) module cache, writable."""
    shutil.copytree(src, dst, dirs_exist_ok=True, copy_function=shutil.copyfile)
    return dst


def stage_configuration(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(paths.ROOT / "crossplane.yaml", dest / "crossplane.yaml")
    _copy(paths.APIS, dest / "apis")
    return dest


def standin_meta(path: str) -> dict:
    name = path.rsplit("/", 1)[1]
    return {
        "apiVersion": "meta.pkg.crossplane.io/v1",
        "kind": "Provider",
        "metadata": {"name": name, "annotations": {
            STANDIN_ANNOTATION: "true",
            "meta.crossplane.io/description": (
                f"Modelplane lab stand-in for {path}: its CRDs only, from schemas/upstream; "
                "no controller runs (no cloud in the lab)."),
        }},
        "spec": {},
    }


def is_standin(path: str) -> bool:
    return path.startswith(STANDIN_PREFIX)


def standin_crds(package_paths: Iterable[str], vendored: Path | None = None) -> dict[str, list[str]]:
    """Vendored CRD files (relative to schemas/upstream) for each stand-in provider package.

    Upjet's layout: ``provider-<cloud>-<service>`` serves ``<service>.<cloud>.m.upbound.io``;
    ``provider-family-<cloud>`` serves the ProviderConfig kinds (``<cloud>.m.upbound.io``).
    Without a family package among the dependencies, the ProviderConfig kinds ride with the
    cloud's first service package (a CRD belongs to exactly one package). A monolithic
    ``provider-<cloud>`` (provider-nebius, provider-vultr) serves every vendored CRD of its cloud,
    so it cannot share the cloud with service or family packages."""
    vendored = vendored or paths.crds_dir()
    out: dict[str, list[str]] = {}
    config_home: dict[str, str] = {}
    monoliths: dict[str, str] = {}
    wanted = [p for p in package_paths if is_standin(p)]
    for path in wanted:
        m = _UPJET.match(path.rsplit("/", 1)[1])
        if not m:
            raise ValueError(f"crossplane.yaml dependsOn {path}: not an Upjet provider name the lab can stand in for")
        if cloud := m.group("mcloud"):
            folder = vendored / f"provider-upjet-{cloud}"
            if not folder.is_dir():
                raise ValueError(f"crossplane.yaml dependsOn {path}: no vendored CRDs in {folder} for this "
                                 "monolithic provider; add them to hack/crds/sources.yaml")
            monoliths[cloud] = path
            out[path] = sorted(f"{folder.name}/{f.name}" for f in folder.glob("*.yaml"))
            continue
        cloud = m.group("fcloud") or m.group("cloud")
        folder = vendored / f"provider-upjet-{cloud}"
        if m.group("fcloud"):
            config_home[cloud] = path
            out[path] = []
            continue
        config_home.setdefault(cloud, path)
        group = f"{m.group('service')}.{cloud}.m.upbound.io_"
        out[path] = sorted(f"{folder.name}/{f.name}" for f in folder.glob(f"{group}*.yaml"))
    if both := sorted(set(monoliths) & set(config_home)):
        cloud = both[0]
        raise ValueError(f"crossplane.yaml dependsOn {monoliths[cloud]} and {config_home[cloud]}: the monolithic "
                         f"provider already serves every {cloud} kind; depend on one or the other")
    for cloud, path in config_home.items():
        folder = vendored / f"provider-upjet-{cloud}"
        out[path] += sorted(f"{folder.name}/{f.name}" for f in folder.glob(f"{cloud}.m.upbound.io_*.yaml"))
    return out


def stage_standin(path: str, crds: Iterable[str], dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "crossplane.yaml").write_text(yaml.safe_dump(standin_meta(path), sort_keys=False))
    for rel in crds:
        shutil.copyfile(paths.crds_dir() / rel, dest / Path(rel).name)
    return dest


def plan(workdir: Path, prebuilt: Path | None = None) -> list[Package]:
    """Stage every package; the Configuration first, then its dependencies in file order. With
    ``prebuilt`` (``make xpkg``'s folder) each function is that folder's package at the project's
    version, which must satisfy ``crossplane.yaml``'s constraint."""
    cfg = yaml.safe_load((paths.ROOT / "crossplane.yaml").read_text())
    version = "v" + _project_version()
    out = [Package("Configuration", CONFIGURATION, version, stage_configuration(workdir / "modelplane"))]
    standins = standin_crds(d["package"] for d in dependencies(cfg))
    for dep in dependencies(cfg):
        path, kind = dep["package"], dep["kind"]
        where = f"crossplane.yaml dependsOn {path}"
        name = path.rsplit("/", 1)[1]
        if kind == "Function":
            src = paths.FUNCTIONS / name / "package"
            if not (src / "crossplane.yaml").is_file():
                raise ValueError(f"{where}: no {src}/crossplane.yaml (a function this package does not hold)")
            if prebuilt is None:
                out.append(Package(kind, path, floor(dep.get("version", ""), where), _copy(src, workdir / name)))
                continue
            built = prebuilt / f"{name}-{version}.xpkg"
            if not built.is_file():
                raise ValueError(f"{where}: no {built} (run `make xpkg`)")
            floor(dep.get("version", ""), where)
            out.append(Package(kind, path, version, src, xpkg=built))
        elif path in BUILT_PROVIDERS:
            tool = BUILT_PROVIDERS[path]
            root = _copy(upstream.source(tool, "package"), workdir / name)
            out.append(Package(kind, path, upstream.version(tool), root))
        elif is_standin(path):
            out.append(Package(kind, path, floor(dep.get("version", ""), where),
                               stage_standin(path, standins[path], workdir / name), standin=True))
        else:
            raise ValueError(f"{where}: the lab has neither a build nor a stand-in for it "
                             f"(add it to modelplane.e2e.packages)")
    return out


def _project_version() -> str:
    import tomllib
    return tomllib.loads((paths.ROOT / "pyproject.toml").read_text())["project"]["version"]


def local_ref(registry: str, pkg: Package) -> str:
    return f"{registry}/{pkg.path}:{pkg.tag}"


def package_yaml(root: Path) -> bytes:
    """``package.yaml`` of a package root: ``crossplane.yaml`` first, then every other YAML
    document under the root in path order, each written back as parsed (no typed schema)."""
    files = [root / "crossplane.yaml"] + [p for p in paths.yaml_files(root) if p != root / "crossplane.yaml"]
    docs = [d for f in files for d in yaml.safe_load_all(f.read_text()) if d]
    return "".join("---\n" + yaml.safe_dump(d, sort_keys=False) for d in docs).encode()


def _tar(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def xpkg_tarball(root: Path) -> bytes:
    """An xpkg as ``crossplane xpkg build`` writes it (an image tarball, one layer holding
    ``package.yaml``, labelled ``io.crossplane.xpkg: base``), built without a typed parse.

    Why not the CLI here: the v2.2 CLI (the one `make tools` pins) re-encodes every object
    through its own Go types and drops XRD fields it does not know, such as
    ``versions[].subresources.scale`` (new in Crossplane v2.3): ModelDeployment would lose
    ``kubectl scale``. Crossplane reads this layout (annotated layer, else the flattened
    filesystem: crossplane-runtime v2.3 ``xpkg.ExtractPackageYAML``)."""
    layer = _tar({"package.yaml": package_yaml(root)})
    gz = io.BytesIO()
    with gzip.GzipFile(fileobj=gz, mode="wb", mtime=0) as f:
        f.write(layer)
    blob = gz.getvalue()
    diff_id, digest = hashlib.sha256(layer).hexdigest(), hashlib.sha256(blob).hexdigest()
    config = json.dumps({
        "architecture": "", "os": "", "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}],
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{diff_id}"]},
        "config": {"Labels": {f"io.crossplane.xpkg:sha256:{digest}": "base"}},
    }, separators=(",", ":")).encode()
    config_name = f"sha256:{hashlib.sha256(config).hexdigest()}"
    manifest = json.dumps([{"Config": config_name, "RepoTags": None, "Layers": [f"{digest}.tar.gz"]}]).encode()
    return _tar({"manifest.json": manifest, config_name: config, f"{digest}.tar.gz": blob})


def build_and_push(crossplane: Path, pkg: Package, registry: str, workdir: Path) -> str:
    """Build (``crossplane xpkg build``; the Configuration: ``xpkg_tarball``), then
    ``crossplane xpkg push``; returns the local reference."""
    out = workdir / f"{pkg.path.replace('/', '_')}.xpkg"
    if pkg.xpkg is not None:
        out = pkg.xpkg
    elif pkg.kind == "Configuration":
        out.write_bytes(xpkg_tarball(pkg.root))
    else:
        empty = workdir / "no-examples"
        empty.mkdir(exist_ok=True)
        _run([crossplane, "xpkg", "build", "-f", pkg.root, "-o", out, "--examples-root", empty])
    ref = local_ref(registry, pkg)
    _run([crossplane, "xpkg", "push", "-f", out, ref])
    return ref


def _run(argv: list) -> None:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(str(a) for a in argv[:3])} failed ({done.returncode}):\n"
                           f"{(done.stderr or done.stdout).strip()[-2000:]}")


def image_configs(registry: str) -> list[dict]:
    """ImageConfigs that send each upstream registry to the local one (same path below it)."""
    return [{
        "apiVersion": "pkg.crossplane.io/v1beta1",
        "kind": "ImageConfig",
        "metadata": {"name": f"lab-{host.split('.')[1]}"},
        "spec": {"matchImages": [{"type": "Prefix", "prefix": f"{host}/"}],
                 "rewriteImage": {"prefix": f"{registry}/{host}/"}},
    } for host in REGISTRIES]


def configuration(pkg: Package) -> dict:
    """The one object a user applies."""
    return {"apiVersion": "pkg.crossplane.io/v1", "kind": "Configuration",
            "metadata": {"name": "modelplane"},
            "spec": {"package": f"{pkg.path}:{pkg.tag}"}}
