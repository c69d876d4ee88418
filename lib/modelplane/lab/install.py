"""Putting objects into a lab cluster: CRDs (and waiting until they are served), lab objects.

Uses ``modelplane.kube.Client`` (one admin REST client per cluster). Objects the
lab owns are created once; an existing one (a re-run) is left as it is.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from modelplane import paths
from modelplane.kube import ApiError, Client
from modelplane.render import reader

# The upstream CRDs workloads composed for a workload cluster use (under paths.crds_dir()).
WORKLOAD_CRDS = (
    "gateway-api/gateway.networking.k8s.io_gatewayclasses.yaml",
    "gateway-api/gateway.networking.k8s.io_gateways.yaml",
    "gateway-api/gateway.networking.k8s.io_httproutes.yaml",
    "gateway-api/gateway.networking.k8s.io_referencegrants.yaml",
    "gateway-api-inference-extension/inference.networking.k8s.io_inferencepools.yaml",
    "lws/leaderworkerset.x-k8s.io_leaderworkersets.yaml",
)
CRD_API = "apiextensions.k8s.io/v1"


def load_crds(files: Sequence[str], why: str, root: Path | None = None) -> list[dict]:
    """The CRD documents of ``files`` (under ``root``, default the vendored ones); a missing file
    is an error naming it and ``why`` the lab needs it."""
    root = Path(root) if root else paths.crds_dir()
    out = []
    for rel in files:
        path = root / rel
        if not path.is_file():
            raise FileNotFoundError(f"{path}: upstream CRD missing ({why}); "
                                    f"restore schemas/upstream or set $MODELPLANE_CRDS")
        out.append(reader.load_one(path.read_text(encoding="utf-8")))
    return out


def workload_crds(root: Path | None = None) -> list[dict]:
    """The CRD documents of ``WORKLOAD_CRDS``."""
    return load_crds(WORKLOAD_CRDS, "the lab installs it into every cluster", root)


def create(client: Client, obj: Mapping[str, Any]) -> dict | None:
    """Create ``obj``; None when it already exists. (A Node keeps the status it is created with,
    as a kubelet registers it; other kinds drop it, which is what the lab wants: CRD files
    carry an empty upstream status.)"""
    body = copy.deepcopy(dict(obj))
    try:
        made = client.create(body)
    except ApiError as err:
        if err.code == 409:
            return None
        raise ApiError(err.code, err.reason, f"creating {_label(obj)}: {err.message}", err.causes) from None
    return made


def create_all(client: Client, objs: Iterable[Mapping[str, Any]]) -> int:
    return sum(1 for o in objs if create(client, o) is not None)


def install_crds(client: Client, crds: Iterable[Mapping[str, Any]], timeout: float = 60.0) -> None:
    """Create every CRD and wait until each is Established (its kinds are served)."""
    names = []
    for crd in crds:
        create(client, crd)
        names.append(crd["metadata"]["name"])
    deadline = time.monotonic() + timeout
    for name in names:
        while not _established(client, name):
            if time.monotonic() > deadline:
                raise TimeoutError(f"CRD {name} was not Established within {timeout:.0f} s")
            time.sleep(0.1)


def _established(client: Client, name: str) -> bool:
    crd = client.get(f"/apis/{CRD_API}/customresourcedefinitions/{name}")
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [])


def _label(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')}/{ns}{meta.get('name')}"
