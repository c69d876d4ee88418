"""Functions run from their package image, as Crossplane's Deployment runtime would run them.

With ``MODELPLANE_E2E_FUNCTIONS=image`` (``make e2e-crossplane``) the External
runtime (``package_runtime``) starts each active FunctionRevision's **own
package** as a container, with podman (``modelplane.e2e.podman``), instead of
``modelplane serve``. The Function packages were built by ``make xpkg`` with
their runtime image embedded and pushed to the local registry, so what runs is
what a user's cluster would pull. What the Deployment runtime does, and what
this does instead (Crossplane v2.3, ``internal/controller/pkg/runtime``):

- image: the revision's ``status.resolvedImage`` (the package path after
  ImageConfig rewrites; ``runtime_function.go:129``), pulled from the loopback
  registry (plain HTTP: ``--tls-verify=false``, for loopback hosts only);
- TLS: the revision's server Secret mounted at ``/tls/server`` with
  ``TLS_SERVER_CERTS_DIR`` naming it (``runtime.go:59-63``); files mode 0644,
  a Secret volume's default mode;
- user: ``2000:2000`` (``runtime.go:75-84``: RunAsUser, RunAsGroup, RunAsNonRoot);
- port: gRPC on 9443 (``runtime.go:54``), published on ``127.0.0.1:<free port>``
  over podman's bridge network: that is the endpoint Crossplane dials (the
  certificate names 127.0.0.1).

The container's output goes to the runtime's log file for the package. The
recorded pid is the container's main process (``serve``, pid 1 inside it): the
runtime's liveness check and ``stop_pid`` (SIGTERM) work on it as on a
process, and ``--rm`` removes the container when it exits.
"""
from __future__ import annotations

import ipaddress
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from modelplane.e2e import podman

CERTS_DIR = "/tls/server"
POD_USER = "2000:2000"
PORT = 9443
LABEL = "modelplane.ai/lab=runtime"


def image_ref(rev: Mapping[str, Any]) -> str:
    """The image the Deployment runtime would run: the resolved package (rewritten by ImageConfigs)."""
    return (rev.get("status") or {}).get("resolvedImage") or (rev.get("spec") or {}).get("image", "")


def _loopback(ref: str) -> bool:
    host = ref.split("/", 1)[0].rsplit(":", 1)[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def secret_volume(tls_dir: Path, dest: Path) -> Path:
    """The TLS files as a Secret volume shows them to any user: a fresh folder, files 0644."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    dest.chmod(0o755)
    for name in ("tls.crt", "tls.key", "ca.crt"):
        shutil.copyfile(tls_dir / name, dest / name)
        (dest / name).chmod(0o644)
    return dest


def pull(ref: str) -> None:
    podman.run("pull", "--quiet", *(["--tls-verify=false"] if _loopback(ref) else []), ref, timeout=900)


def start(name: str, ref: str, port: int, tls_dir: Path, volume: Path, log: Path) -> tuple[int, str]:
    """Pull ``ref`` and run it as container ``name``; returns (host pid of its main process, container id)."""
    pull(ref)
    log.parent.mkdir(parents=True, exist_ok=True)
    vol = secret_volume(tls_dir, volume)
    cid = podman.run(
        "run", "--detach", "--rm", "--replace", "--name", name, "--label", LABEL,
        "--publish", f"127.0.0.1:{port}:{PORT}", "--volume", f"{vol}:{CERTS_DIR}:ro",
        "--env", f"TLS_SERVER_CERTS_DIR={CERTS_DIR}", "--user", POD_USER,
        "--log-driver", "k8s-file", "--log-opt", f"path={log}", ref).stdout.strip()
    state = json.loads(podman.run("inspect", "--format", "{{json .State}}", cid).stdout)
    if not state.get("Pid"):
        raise RuntimeError(f"container {name} ({ref}) is not running: {state.get('Error') or state.get('Status')}")
    return int(state["Pid"]), cid


def remove_all() -> list[str]:
    """Remove every container this runtime labelled (stopped ones too), then the images it pulled
    from a loopback registry (their layers stay while ``make images``' images use them); the
    containers' names."""
    try:
        out = podman.run("ps", "--all", "--filter", f"label={LABEL}", "--format", "{{.Names}}", check=False).stdout
    except podman.MissingImages:
        return []
    names = out.split()
    if names:
        podman.run("rm", "--force", "--time", "5", *names, check=False)
    refs = podman.run("images", "--format", "{{.Repository}}:{{.Tag}}", check=False).stdout.split()
    pulled = [r for r in refs if _loopback(r) and "/xpkg.crossplane.io/" in r]
    if pulled:
        podman.run("rmi", "--force", *pulled, check=False)
    return names
