"""etcd on loopback: plain HTTP on 127.0.0.1, one member, a throwaway data dir.

One etcd can back several API servers: each takes its own ``--etcd-prefix``.
``--unsafe-no-fsync`` because the data is thrown away after the run and fsync
dominates write latency on a shared CI disk.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from modelplane.kube import tools
from modelplane.kube.net import free_port, read_url
from modelplane.kube.process import ComponentError, Process, start_ready

READY_TIMEOUT = 20.0


class Etcd:
    """A running etcd; ``endpoint`` is its client URL."""

    def __init__(self, directory: Path, binary: Path | None = None, timeout: float = READY_TIMEOUT) -> None:
        binary = binary or tools.find("etcd")
        if binary is None:
            raise ComponentError(tools.missing("etcd"))
        self.directory = directory

        def start() -> tuple[Process, Callable[[], bool]]:
            shutil.rmtree(directory / "data", ignore_errors=True)  # a new start is a new member
            client, peer = free_port(), free_port()
            self.endpoint = f"http://127.0.0.1:{client}"
            peer_url = f"http://127.0.0.1:{peer}"
            process = Process("etcd", [
                binary, "--name=local", f"--data-dir={directory / 'data'}",
                f"--listen-client-urls={self.endpoint}", f"--advertise-client-urls={self.endpoint}",
                f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=local={peer_url}", "--initial-cluster-state=new",
                "--unsafe-no-fsync", "--log-level=warn",
            ], directory / "etcd.log")
            return process, self._healthy

        self.process, self.ready_seconds = start_ready(start, timeout)

    def _healthy(self) -> bool:
        return json.loads(read_url(f"{self.endpoint}/health", timeout=2)).get("health") == "true"

    def stop(self) -> None:
        self.process.stop()
