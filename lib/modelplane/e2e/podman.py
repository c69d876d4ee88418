"""Podman as this project runs it: its own configuration, its own storage, its Docker API socket.

Debian's podman 4.3 runs the function images here with three settings, all in
``hack/images/containers.conf`` (``CONTAINERS_CONF`` points at it for every
podman this module starts; nothing on the machine is edited):

- ``default_ulimits = []``: podman run as root raises ``RLIMIT_NOFILE`` to
  1048576 for every container; where the hard limit is lower, runc fails with
  "error setting rlimits ... operation not permitted";
- ``runtime = "runc"``: crun fails on hybrid cgroup hierarchies (cgroup v1
  controllers plus a cgroup2 mount at ``/sys/fs/cgroup/unified``);
- ``cgroup_manager = "cgroupfs"``, ``events_logger = "file"``: no systemd here.

Images and containers live under ``images_dir()/podman`` (``--root``,
``--runroot``), not in ``/var/lib/containers``. ``Service`` is ``podman
system service``: the Docker Engine API on a unix socket, what ``crossplane
render`` speaks with ``DOCKER_HOST=unix://<socket>``. Containers use podman's
default bridge network with published ports, as ``crossplane render`` asks.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from modelplane import paths
from modelplane.kube.process import Process

CONF = paths.ROOT / "hack" / "images" / "containers.conf"
MANIFEST = "images.json"


class MissingImages(RuntimeError):
    """podman or the built images are not on this machine."""


def images_dir() -> Path:
    """``$MODELPLANE_IMAGES_DIR``, else ``~/.cache/modelplane/images`` (beside the tools)."""
    env = os.environ.get("MODELPLANE_IMAGES_DIR")
    return Path(env) if env else Path.home() / ".cache" / "modelplane" / "images"


def binary() -> str:
    found = shutil.which("podman")
    if not found:
        raise MissingImages("podman is not installed: run `make images` (it installs Debian's podman as root)")
    return found


def env(base: dict[str, str] | None = None) -> dict[str, str]:
    out = dict(os.environ if base is None else base)
    out["CONTAINERS_CONF"] = str(CONF)
    return out


def argv(*args: str, root: Path | None = None) -> list[str]:
    """``podman --root <cache>/podman/storage --runroot <cache>/podman/run ARGS``."""
    where = (root or images_dir()) / "podman"
    return [binary(), "--root", str(where / "storage"), "--runroot", str(where / "run"), *args]


def run(*args: str, root: Path | None = None, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run(argv(*args, root=root), env=env(), capture_output=True, text=True,
                          timeout=timeout, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args[:2])} failed ({done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()[-1500:]}")
    return done


def manifest(root: Path | None = None) -> dict:
    """What ``make images`` built: ``{"version", "python", "functions": {name: {"ref", "id", ...}}}``."""
    path = (root or images_dir()) / MANIFEST
    if not path.exists():
        raise MissingImages(f"no {path}: run `make images`")
    return json.loads(path.read_text())


def image_ids(root: Path | None = None) -> dict[str, str]:
    """Tag -> image ID of every image in the project's podman storage."""
    out = run("images", "--format", "json", root=root).stdout
    found: dict[str, str] = {}
    for img in json.loads(out or "[]"):
        for name in img.get("Names") or []:
            found[name] = "sha256:" + img["Id"]
    return found


class Service:
    """``podman system service`` on ``<dir>/podman.sock`` until ``stop()``."""

    def __init__(self, directory: Path, *, root: Path | None = None, timeout: float = 30) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.socket = directory / "podman.sock"
        if self.socket.exists():
            self.socket.unlink()
        self.process = Process("podman-service", argv("system", "service", "--time=0", f"unix://{self.socket}",
                                                      root=root),
                               directory / "podman-service.log", env=env())
        self.process.wait_ready(self.ping, timeout)

    @property
    def docker_host(self) -> str:
        return f"unix://{self.socket}"

    def ping(self) -> bool:
        """Does the socket answer the Docker API's ``GET /_ping`` with OK?"""
        if not self.process.alive():
            raise self.process.failure("exited")
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(2)
                s.connect(str(self.socket))
                s.sendall(b"GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n")
                reply = s.recv(4096)
        except OSError:
            return False
        return reply.startswith(b"HTTP/1.") and reply.rstrip().endswith(b"OK")

    def stop(self) -> None:
        self.process.stop()
        deadline = time.monotonic() + 5
        while self.socket.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
