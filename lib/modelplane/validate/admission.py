"""Manifests as the API server admits them: which are Modelplane XRs, and their defaults.

``simulate`` and ``lab`` both start from a folder of manifests; both must see
an XR as ``kubectl apply`` would leave it in the API server, with the defaults
its XRD's schema declares (a ModelDeployment's pod template gets
``httpGet.scheme: HTTP``, ``fieldRef.apiVersion: v1``..., which functions then
copy into what they compose; found against real Crossplane).
"""
from __future__ import annotations

import functools
from pathlib import Path

from modelplane import paths
from modelplane.render import reader

GROUP = "modelplane.ai"
API_VERSION = f"{GROUP}/v1alpha1"
XR_KINDS = frozenset({
    "InferenceClass", "InferenceGateway", "InferenceCluster", "ModelCache",
    "ModelDeployment", "ModelReplica", "ModelEndpoint", "ModelService",
})


def is_xr(obj: dict) -> bool:
    """Whether ``obj`` is one of Modelplane's XRs."""
    return obj.get("apiVersion") == API_VERSION and obj.get("kind") in XR_KINDS


@functools.cache
def _xrd_validator():
    from modelplane.validate import Validator
    return Validator.from_paths([paths.APIS])


def admitted(doc: dict) -> dict:
    """``doc`` as the API server stores it: with the defaults its XRD's schema declares."""
    return _xrd_validator().apply_defaults(doc)


def load_dir(directory: Path) -> tuple[list[dict], list[dict]]:
    """All manifests under ``directory`` (recursively, name order): (XRs, defaulted as admitted; others)."""
    xrs: list[dict] = []
    others: list[dict] = []
    for path in paths.yaml_files(directory):
        for doc in reader.load_all_fast(path.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or not doc.get("kind"):
                continue
            if is_xr(doc):
                xrs.append(admitted(doc))
            else:
                others.append(doc)
    return xrs, others
