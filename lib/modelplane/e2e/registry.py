"""A local OCI registry: Debian's ``docker-registry`` (CNCF distribution) on loopback.

Crossplane's package manager and the crossplane CLI both speak plain HTTP to
``127.0.0.1:<port>`` (go-containerregistry treats loopback registries as
insecure), so the registry needs no certificate. Storage is a folder in the
state directory; the log is beside it.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import yaml

from modelplane.kube.net import free_port, http_ok, read_url
from modelplane.kube.process import ComponentError, Process

READY_TIMEOUT = 15.0
INSTALL_HINT = "apt-get install docker-registry (Debian's CNCF distribution registry), or set DOCKER_REGISTRY_BIN"


def find_binary() -> Path | None:
    """``$DOCKER_REGISTRY_BIN``, else ``docker-registry`` on PATH."""
    env = os.environ.get("DOCKER_REGISTRY_BIN")
    if env:
        return Path(env)
    found = shutil.which("docker-registry")
    return Path(found) if found else None


def config(directory: Path, port: int) -> dict:
    return {
        "version": 0.1,
        "log": {"level": "warn"},
        "storage": {"filesystem": {"rootdirectory": str(directory / "data")}, "delete": {"enabled": True}},
        # One registry process: a fixed secret keeps its own upload sessions valid.
        "http": {"addr": f"127.0.0.1:{port}", "secret": "modelplane-lab"},
    }


class Registry:
    """A running registry; ``host`` is ``127.0.0.1:<port>``, the prefix of every reference."""

    def __init__(self, directory: Path, binary: Path | None = None) -> None:
        binary = binary or find_binary()
        if binary is None:
            raise ComponentError(f"no OCI registry: {INSTALL_HINT}")
        directory.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        cfg = directory / "config.yml"
        cfg.write_text(yaml.safe_dump(config(directory, self.port), sort_keys=False))
        self.process = Process("docker-registry", [binary, "serve", cfg], directory / "registry.log")
        self.process.wait_ready(self.ready, READY_TIMEOUT)

    def ready(self) -> bool:
        return http_ok(f"http://{self.host}/v2/", timeout=2)

    def tags(self, repository: str) -> list[str]:
        """The tags of ``repository`` (``modelplane/compose-model-deployment``)."""
        return sorted(json.loads(read_url(f"http://{self.host}/v2/{repository}/tags/list", timeout=5)).get("tags") or [])

    def stop(self) -> None:
        self.process.stop()
