"""How the observer reaches its API server: in cluster, as its pod's service account.

The same three things client-go's in-cluster config reads: the server from
``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT``, the cluster CA and
the (rotated) token from the service-account folder. Tests and the lab point
the folder and the server elsewhere (``--serviceaccount-dir``, ``--server``).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from modelplane.kube.client import Client

SERVICEACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class ConfigError(Exception):
    """The observer cannot tell where its API server is or how to sign in."""


def server_from(env: Mapping[str, str]) -> str:
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise ConfigError("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not in a pod?): "
                          "pass --server URL")
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    return f"https://{host}:{port}"


def client(server: str | None = None, sa_dir: Path = SERVICEACCOUNT_DIR, timeout: float = 30.0,
           env: Mapping[str, str] | None = None) -> Client:
    """A client signed in with the service account's token, trusting the cluster's CA."""
    server = server or server_from(os.environ if env is None else env)
    ca, token = sa_dir / "ca.crt", sa_dir / "token"
    for f in (ca, token):
        if not f.is_file():
            raise ConfigError(f"{f} does not exist: the pod needs its service-account token mounted "
                              "(automountServiceAccountToken), or pass --serviceaccount-dir")
    return Client(server, ca, timeout=timeout, token_file=token)
