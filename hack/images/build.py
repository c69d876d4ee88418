"""Build one OCI runtime image per Modelplane function, from Debian packages and uv.lock only.

    .venv/bin/python hack/images/build.py [--fresh] [--no-load]     (make images; as root)

No Docker, no base image from a registry. Two layers, shared by the eight images:

1. base: ``mmdebstrap --variant=essential`` of Debian 12 (bookworm) with
   ``python3`` and ``libstdc++6`` (grpcio needs it), merged /usr, no man pages,
   locales or docs (copyright files kept), no apt, no apt lists or caches;
   the user ``nonroot`` (65532:65532); ``/etc/modelplane/debian-packages.txt``
   lists every Debian package in it (name, version, architecture).
2. venv: ``uv sync --locked --no-editable`` into ``/venv`` with Debian's
   ``/usr/bin/python3``, run in a chroot of the base (what the Dockerfile's
   build stage runs), then ``compileall --invalidation-mode unchecked-hash``
   (bytecode that names no timestamp); ``/etc/modelplane/python-packages.txt``
   lists every installed distribution.

Each image is those two layers and a config: entrypoint ``/venv/bin/modelplane
serve``, ``MODELPLANE_FUNCTION=<function>``, user ``65532:65532``, port 9443.
Crossplane's package runtime mounts the TLS certificates at ``/tls/server``
and sets ``TLS_SERVER_CERTS_DIR`` (which ``serve`` reads); ``crossplane render``
appends ``--insecure``.

Reproducible: fixed timestamps (``ocilayout.EPOCH``), files in path order,
numeric owners, hash-based bytecode and ``PYTHONHASHSEED=0``. The cache
(``$MODELPLANE_IMAGES_DIR``, default ``~/.cache/modelplane/images``) keeps each
layer under a key of its inputs: the base under this recipe and the Debian
suite, the venv under the base, ``uv.lock``, ``pyproject.toml`` and the
package's files. ``--fresh`` rebuilds both layers whatever the cache holds.
The images are loaded into the project's podman storage (``modelplane.e2e.podman``)
as ``localhost/modelplane/<function>:v<version>`` and listed in ``images.json``.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from modelplane import paths
from modelplane.e2e import ocilayout, podman

ROOT = paths.ROOT
SUITE, MIRROR = "bookworm", "http://deb.debian.org/debian"
INCLUDE = ("python3", "libstdc++6")
DPKG_EXCLUDE = ("/usr/share/man/*", "/usr/share/locale/*", "/usr/share/info/*", "/usr/share/doc/*",
                "/usr/share/lintian/*")
DPKG_INCLUDE = ("/usr/share/doc/*/copyright",)
USER, UID = "nonroot", 65532
PORT = 9443
ENTRYPOINT = ["/venv/bin/modelplane", "serve"]
PATH = "/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# What the Dockerfile's build stage copies (and so what the venv is built from).
SOURCES = ("pyproject.toml", "uv.lock", "README.md", "lib", "schemas", "functions", "apis")
# Left out of the base layer: written at build time, or provided by the container runtime.
BASE_SKIP = ("etc/resolv.conf", "etc/hostname", "etc/machine-id", "var/cache/ldconfig/aux-cache",
             "var/cache/apt", "var/lib/apt/lists", "var/log/apt", "var/log/dpkg.log", "var/log/alternatives.log",
             "var/log/bootstrap.log", "var/cache/debconf/config.dat-old", "var/cache/debconf/templates.dat-old",
             "var/lib/dpkg/status-old", "var/lib/dpkg/diversions-old")
LIST_DISTRIBUTIONS = """import importlib.metadata as m
print("\\n".join(sorted(f"{d.metadata['Name']}=={d.version}" for d in m.distributions())))
"""
REPRO_ENV = {"SOURCE_DATE_EPOCH": str(ocilayout.EPOCH), "PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8", "TZ": "UTC"}


def say(msg: str) -> None:
    print(f"images: {msg}", flush=True)


def sha256(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()


def project_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def functions() -> list[str]:
    return sorted(p.parent.parent.name for p in (ROOT / "functions").glob("*/package/crossplane.yaml"))


def source_files() -> list[Path]:
    out = []
    for name in SOURCES:
        p = ROOT / name
        if p.is_file():
            out.append(p)
            continue
        out += [f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts
                and not f.name.endswith((".pyc", ".egg-info")) and ".egg-info" not in str(f)]
    return sorted(out)


def sh(*cmd: str | Path, env: dict | None = None, capture: bool = False) -> str:
    done = subprocess.run([str(c) for c in cmd], env=env, text=True, check=False,
                          stdout=subprocess.PIPE if capture else None, stderr=subprocess.PIPE if capture else None)
    if done.returncode != 0:
        raise SystemExit(f"images: {' '.join(str(c) for c in cmd[:4])} ... failed ({done.returncode})"
                         + (f":\n{(done.stderr or '')[-3000:]}" if capture else ""))
    return done.stdout or ""


def chroot(rootfs: Path, script: str, *, user: str | None = None, extra_env: dict | None = None,
           capture: bool = False) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", **REPRO_ENV, **(extra_env or {})}
    argv: list = ["chroot"] + ([f"--userspec={user}"] if user else []) + [rootfs, "/usr/bin/env", "-i"]
    argv += [f"{k}={v}" for k, v in env.items()] + ["/bin/sh", "-ec", script]
    return sh(*argv, capture=capture)


# ----- layer 1: the Debian base -----------------------------------------------------------------------
def base_key() -> str:
    recipe = json.dumps([SUITE, MIRROR, INCLUDE, DPKG_EXCLUDE, DPKG_INCLUDE, USER, UID, BASE_SKIP,
                         ocilayout.EPOCH, sh("mmdebstrap", "--version", capture=True).strip()]).encode()
    # The recipe is these settings and the code that applies them (not the rest of this file).
    return sha256(recipe, inspect.getsource(build_base).encode(), inspect.getsource(chroot).encode(),
                  (ROOT / "lib/modelplane/e2e/ocilayout.py").read_bytes())[:16]


def layer_dirs(cache: Path, layer: str, key: str) -> tuple[Path, Path | None]:
    """The cached layer's folder, and an empty work folder to build it in (None: it is cached)."""
    out = cache / f"{layer}-{key}"
    if (out / "diff_id").exists():
        say(f"{layer} {key}: cached")
        return out, None
    work = cache / ".work" / f"{layer}-{key}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    return out, work


def build_base(cache: Path, key: str) -> Path:
    out, work = layer_dirs(cache, "base", key)
    if work is None:
        return out
    start = time.monotonic()
    rootfs = work / "rootfs"
    argv = ["mmdebstrap", "--mode=root", "--variant=essential", "--quiet",
            "--setup-hook=/usr/share/mmdebstrap/hooks/merged-usr/setup00.sh",
            f"--include={','.join(INCLUDE)}"]
    argv += [f"--dpkgopt=path-exclude={p}" for p in DPKG_EXCLUDE]
    argv += [f"--dpkgopt=path-include={p}" for p in DPKG_INCLUDE]
    sh(*argv, SUITE, rootfs, MIRROR, env={**os.environ, **REPRO_ENV})
    # The user the images run as (Crossplane's Deployment runtime runs pods as 2000:2000 anyway).
    with (rootfs / "etc/passwd").open("a") as f:
        f.write(f"{USER}:x:{UID}:{UID}:{USER}:/home/{USER}:/usr/sbin/nologin\n")
    with (rootfs / "etc/group").open("a") as f:
        f.write(f"{USER}:x:{UID}:\n")
    (rootfs / "home" / USER).mkdir(parents=True, exist_ok=True)
    os.chown(rootfs / "home" / USER, UID, UID)
    for folder in ("var/log", "var/cache/apt"):   # left empty: dpkg and apt logs hold build times
        for p in (rootfs / folder).glob("*"):
            if p.is_file():
                p.unlink()
    packages = chroot(rootfs, "dpkg-query -W -f='${Package}\\t${Version}\\t${Architecture}\\n' | sort",
                      capture=True)
    python = chroot(rootfs, "/usr/bin/python3 -c 'import sys; print(sys.version.split()[0])'", capture=True).strip()
    (rootfs / "etc/modelplane").mkdir(exist_ok=True)
    (rootfs / "etc/modelplane/debian-packages.txt").write_text(packages)
    layer = work / "layer.tar"
    diff_id = ocilayout.write_layer(rootfs, layer, skip=BASE_SKIP)
    (work / "packages.txt").write_text(packages)
    (work / "python").write_text(python + "\n")
    (work / "diff_id").write_text(diff_id + "\n")
    shutil.rmtree(out, ignore_errors=True)
    work.rename(out)
    say(f"base {key}: built in {time.monotonic() - start:.0f} s ({len(packages.splitlines())} Debian packages, "
        f"Python {python}, {layer_mb(out / 'layer.tar')} MB)")
    return out


# ----- layer 2: the venv -------------------------------------------------------------------------------
def venv_key(base: Path) -> str:
    parts = [(base / "diff_id").read_bytes(), (ROOT / "hack/images/build.py").read_bytes(),
             sh(ROOT / ".venv/bin/uv", "--version", capture=True).encode()]
    for f in source_files():
        parts += [str(f.relative_to(ROOT)).encode(), f.read_bytes()]
    return sha256(*parts)[:16]


def build_venv(cache: Path, base: Path, key: str) -> Path:
    out, work = layer_dirs(cache, "venv", key)
    if work is None:
        return out
    start = time.monotonic()
    rootfs = work / "rootfs"
    sh("cp", "-a", base / "rootfs", rootfs)   # the base as mmdebstrap left it (device nodes for the chroot)
    for name in SOURCES:
        src, dst = ROOT / name, rootfs / "src" / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_file():
            shutil.copyfile(src, dst)
        else:
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    # uv records the newest source time of a local project in its dist-info (uv_cache.json).
    for p in [rootfs / "src", *(rootfs / "src").rglob("*")]:
        os.utime(p, (ocilayout.EPOCH, ocilayout.EPOCH), follow_symlinks=False)
    shutil.copyfile(ROOT / ".venv/bin/uv", rootfs / "tmp/uv")
    os.chmod(rootfs / "tmp/uv", 0o755)
    shutil.copyfile("/etc/resolv.conf", rootfs / "etc/resolv.conf")  # a cold uv cache downloads from PyPI
    tls = {}
    if os.environ.get("SSL_CERT_FILE"):   # a machine that reaches PyPI through its own CA: the chroot trusts it too
        shutil.copyfile(os.environ["SSL_CERT_FILE"], rootfs / "tmp/ca.crt")
        tls = {"SSL_CERT_FILE": "/tmp/ca.crt"}
    uv_cache = Path(sh(ROOT / ".venv/bin/uv", "cache", "dir", capture=True).strip())
    uv_cache.mkdir(parents=True, exist_ok=True)
    (rootfs / "tmp/uv-cache").mkdir()
    mounts = []
    try:
        for args, where in ((("-t", "proc", "proc"), rootfs / "proc"), (("--bind", uv_cache), rootfs / "tmp/uv-cache")):
            sh("mount", *args, where)
            mounts.append(where)
        # The Dockerfile's build stage, step for step.
        chroot(rootfs, "cd /src && /tmp/uv sync --quiet --locked --no-editable", extra_env={
            "UV_PROJECT_ENVIRONMENT": "/venv", "UV_PYTHON": "/usr/bin/python3", "UV_PYTHON_DOWNLOADS": "never",
            "UV_COMPILE_BYTECODE": "0", "UV_LINK_MODE": "copy", "UV_CACHE_DIR": "/tmp/uv-cache", **tls})
        chroot(rootfs, "/usr/bin/python3 -m compileall -q -j 1 --invalidation-mode unchecked-hash /venv")
        # The image's user runs it, from a folder it cannot write to.
        chroot(rootfs, "cd / && /venv/bin/modelplane serve --help >/dev/null", user=f"{UID}:{UID}")
        (rootfs / "tmp/dists.py").write_text(LIST_DISTRIBUTIONS)
        dists = chroot(rootfs, "/venv/bin/python /tmp/dists.py", capture=True)
    finally:
        for where in reversed(mounts):
            sh("umount", where)
    for note in (rootfs / "venv/lib").glob("python3*/site-packages/*.dist-info/uv_cache.json"):
        fix_uv_cache_note(note)
    (rootfs / "etc/modelplane/python-packages.txt").write_text(dists)
    layer = work / "layer.tar"
    diff_id = ocilayout.write_layer(rootfs, layer, tops=("etc/modelplane/python-packages.txt", "venv"),
                                     skip=("venv/.lock",))   # uv's lock file (empty, mode 666)
    (work / "python-packages.txt").write_text(dists)
    (work / "diff_id").write_text(diff_id + "\n")
    shutil.rmtree(rootfs)
    shutil.rmtree(out, ignore_errors=True)
    work.rename(out)
    say(f"venv {key}: built in {time.monotonic() - start:.0f} s ({len(dists.splitlines())} Python distributions, "
        f"{layer_mb(out / 'layer.tar')} MB)")
    return out


def fix_uv_cache_note(note: Path) -> None:
    """uv notes the time it built a local project (``uv_cache.json``, listed in ``RECORD``; only
    uv reads it, to decide when to rebuild): set it to the fixed time, and its line in RECORD."""
    doc = json.loads(note.read_text())
    doc["timestamp"] = {"secs_since_epoch": ocilayout.EPOCH, "nanos_since_epoch": 0}
    data = json.dumps(doc, separators=(",", ":")).encode()
    note.write_bytes(data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record = note.parent / "RECORD"
    lines = [f"{note.parent.name}/{note.name},sha256={digest},{len(data)}"
             if line.split(",", 1)[0] == f"{note.parent.name}/{note.name}" else line
             for line in record.read_text().splitlines()]
    record.write_text("\n".join(lines) + "\n")


def layer_mb(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.0f}"


# ----- the images --------------------------------------------------------------------------------------
def image_config(function: str, version: str, python: str) -> dict:
    return {
        "User": f"{UID}:{UID}",
        "Entrypoint": ENTRYPOINT,
        "Env": [f"PATH={PATH}", f"MODELPLANE_FUNCTION={function}"],
        "ExposedPorts": {f"{PORT}/tcp": {}},
        "WorkingDir": "/",
        "Labels": {
            "org.opencontainers.image.title": function,
            "org.opencontainers.image.version": f"v{version}",
            "org.opencontainers.image.source": "https://github.com/modelplane/modelplane",
            "org.opencontainers.image.licenses": "Apache-2.0",
            "ai.modelplane.python": python,
        },
    }


def images(base: Path, venv: Path, version: str) -> dict[str, ocilayout.Image]:
    python = (base / "python").read_text().strip()
    layers = ((base / "layer.tar", (base / "diff_id").read_text().strip()),
              (venv / "layer.tar", (venv / "diff_id").read_text().strip()))
    history = [f"mmdebstrap --variant=essential {SUITE} + {' '.join(INCLUDE)} (hack/images/build.py)",
               "uv sync --locked --no-editable into /venv (hack/images/build.py)"]
    return {fn: ocilayout.Image(ocilayout.config_bytes(image_config(fn, version, python), [d for _, d in layers],
                                                       history), layers, (ref(fn, version),))
            for fn in functions()}


def ref(function: str, version: str) -> str:
    return f"localhost/modelplane/{function}:v{version}"


def load(cache: Path, built: dict[str, ocilayout.Image]) -> None:
    have = podman.image_ids(cache)
    todo = [img for img in built.values() if have.get(img.tags[0]) != img.id]
    if not todo:
        say(f"podman: all {len(built)} images present ({cache / 'podman'})")
        return
    start = time.monotonic()
    archive = cache / ".work" / "load.tar"
    archive.parent.mkdir(parents=True, exist_ok=True)
    ocilayout.write_archive(archive, todo)
    try:
        podman.run("load", "--quiet", "--input", str(archive), root=cache)
    finally:
        archive.unlink()
    have = podman.image_ids(cache)
    wrong = [f"{img.tags[0]}: {have.get(img.tags[0])} != {img.id}" for img in todo if have.get(img.tags[0]) != img.id]
    if wrong:
        raise SystemExit("images: podman load gave other image IDs: " + "; ".join(wrong))
    podman.run("image", "prune", "--force", root=cache)   # earlier builds' images, untagged by this load
    say(f"podman: loaded {len(todo)} images in {time.monotonic() - start:.0f} s")


def clear_work(cache: Path) -> None:
    """Remove what an interrupted build left in ``<cache>/.work``, unmounting first whatever is
    still mounted below it (``/proc``, the uv cache) so that nothing outside is deleted."""
    work = (cache / ".work").resolve()
    if not work.exists():
        return
    with open("/proc/self/mounts") as f:
        points = [line.split()[1] for line in f]
    for point in sorted((p for p in points if p.startswith(f"{work}/")), key=len, reverse=True):
        sh("umount", "--lazy", point)
    shutil.rmtree(work)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--fresh", action="store_true", help="rebuild both layers, whatever the cache holds")
    ap.add_argument("--no-load", action="store_true", help="do not load the images into podman")
    args = ap.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("images: mmdebstrap --mode=root and chroot need root (CI runs as root)")
    start = time.monotonic()
    cache = podman.images_dir()
    cache.mkdir(parents=True, exist_ok=True)
    clear_work(cache)
    version = project_version()
    bkey = base_key()
    if args.fresh:
        shutil.rmtree(cache / f"base-{bkey}", ignore_errors=True)
    base = build_base(cache, bkey)
    vkey = venv_key(base)
    if args.fresh:
        shutil.rmtree(cache / f"venv-{vkey}", ignore_errors=True)
    venv = build_venv(cache, base, vkey)
    # Only the newest base and venv are kept (each is a few hundred MB).
    for old in cache.glob("base-*"):
        if old != base:
            shutil.rmtree(old)
    for old in cache.glob("venv-*"):
        if old != venv:
            shutil.rmtree(old)
    built = images(base, venv, version)
    if not args.no_load:
        load(cache, built)
    size = sum(p.stat().st_size for p, _ in next(iter(built.values())).layers)
    doc = {
        "version": f"v{version}", "python": (base / "python").read_text().strip(), "size_bytes": size,
        "layers": {"base": (base / "diff_id").read_text().strip(), "venv": (venv / "diff_id").read_text().strip()},
        "layer_files": {"base": str(base / "layer.tar"), "venv": str(venv / "layer.tar")},
        "debian_packages": str(base / "packages.txt"), "python_packages": str(venv / "python-packages.txt"),
        "functions": {fn: {"ref": img.tags[0], "id": img.id, "config": json.loads(img.config)}
                      for fn, img in built.items()},
    }
    (cache / podman.MANIFEST).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    print("::: Debian packages in the base layer (name, version, architecture):")
    print((base / "packages.txt").read_text(), end="")
    print(f"::: Python distributions in /venv: {len((venv / 'python-packages.txt').read_text().split())}")
    for img in built.values():
        print(f"::: {img.tags[0]}  {img.id}")
    print(f"::: size: {size / 1e6:.0f} MB uncompressed (base {layer_mb(base / 'layer.tar')} MB + "
          f"venv {layer_mb(venv / 'layer.tar')} MB, shared by all {len(built)} images); "
          f"{time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
