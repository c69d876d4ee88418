"""A kubeconfig with everything embedded (usable as-is in a Secret's ``kubeconfig`` key)."""
from __future__ import annotations

import base64
from pathlib import Path

import yaml


def build(name: str, server: str, ca: bytes, cert: bytes, key: bytes) -> dict:
    """One cluster, one user, one context, all called ``name``; PEM data embedded."""
    b64 = lambda pem: base64.b64encode(pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": b64(ca)}}],
        "users": [{"name": name, "user": {"client-certificate-data": b64(cert), "client-key-data": b64(key)}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
    }


def write(path: Path, config: dict) -> Path:
    """Write with 0600: it holds a private key."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path
