"""Local Kubernetes control planes from upstream binaries (the tool cache of `make tools`).

    with control_plane(state_dir) as api:        # etcd + kube-apiserver on 127.0.0.1
        api.kubeconfig, api.url, api.client()

Modules, for callers that start more (the lab: several API servers on one
etcd, controllers beside them; e2e: Crossplane and the functions it runs;
render: function servers):

- ``tools``: where the upstream programs are (the `make tools` cache)
- ``process``: one child process (log, readiness, stop) and ``start_ready``,
  which starts a server again on new ports when another program took one
- ``net``: loopback networking: free ports, TCP and HTTP probes, proxy-less openers
- ``pki``: CAs, leaf certificates, signing keys, their files
- ``kubeconfig``: a kubeconfig with the certificates embedded
- ``components``: command lines and config files of the lab's controllers (pure)
- ``etcd``, ``apiserver``: ``Etcd`` and ``APIServer``, each ready when constructed
- ``client``: a small REST client for an API server

Ports are free ports on loopback; every program writes its log into the state folder.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from modelplane.kube.apiserver import APIServer
from modelplane.kube.client import ApiError, Client
from modelplane.kube.etcd import Etcd
from modelplane.kube.process import ComponentError

__all__ = ["APIServer", "ApiError", "Client", "ComponentError", "Etcd", "control_plane"]


@contextlib.contextmanager
def control_plane(root: Path, name: str = "local") -> Iterator[APIServer]:
    """etcd and one kube-apiserver under ``root``; both stopped on exit (the folder stays)."""
    etcd = Etcd(root / "etcd")
    try:
        api = APIServer(root / name, etcd.endpoint, name=name)
        try:
            yield api
        finally:
            api.stop()
    finally:
        etcd.stop()
