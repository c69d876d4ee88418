"""etcd on loopback: plain HTTP on 127.0.0.1, one member, a throwaway data dir.

One etcd can back several API servers: each takes its own ``--etcd-prefix``.
``--unsafe-no-fsync`` because the data is thrown away after the run and fsync
dominates write latency on a shared CI disk.
"""
from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

from modelplane.kube import tools
from modelplane.kube.net import free_port
from modelplane.kube.process import ComponentError, Process

READY_TIMEOUT = 20.0
_PORT_ATTEMPTS = 3
# Loopback never goes through an HTTP proxy from the environment.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Etcd:
    """A running etcd; ``endpoint`` is its client URL."""

    def __init__(self, directory: Path, binary: Path | None = None, timeout: float = READY_TIMEOUT) -> None:
        binary = binary or tools.find("etcd")
        if binary is None:
            raise ComponentError(tools.missing("etcd"))
        self.directory = directory
        for attempt in range(_PORT_ATTEMPTS):
            shutil.rmtree(directory / "data", ignore_errors=True)  # a retry starts a new member
            client, peer = free_port(), free_port()
            self.endpoint = f"http://127.0.0.1:{client}"
            peer_url = f"http://127.0.0.1:{peer}"
            self.process = Process("etcd", [
                binary, "--name=local", f"--data-dir={directory / 'data'}",
                f"--listen-client-urls={self.endpoint}", f"--advertise-client-urls={self.endpoint}",
                f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=local={peer_url}", "--initial-cluster-state=new",
                "--unsafe-no-fsync", "--log-level=warn",
            ], directory / "etcd.log")
            try:
                self.ready_seconds = self.process.wait_ready(self._healthy, timeout)
                return
            except ComponentError:
                if self.process.bind_failed() and attempt + 1 < _PORT_ATTEMPTS:
                    continue
                self.process.stop()
                raise

    def _healthy(self) -> bool:
        with _DIRECT.open(f"{self.endpoint}/health", timeout=2) as rsp:
            return json.loads(rsp.read()).get("health") == "true"

    def stop(self) -> None:
        self.process.stop()
