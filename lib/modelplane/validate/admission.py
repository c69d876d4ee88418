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

import yaml

from modelplane import paths
from modelplane.errors import InputError
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
        try:
            text = reader.decode(path.read_bytes())
            docs = reader.load_all_fast(text)
        except yaml.YAMLError as err:
            raise InputError(str(path), " ".join(str(err).split())) from None
        for i, doc in enumerate(docs):
            if not isinstance(doc, dict):
                line = reader.document_line(text, i)
                raise InputError(str(path), f"document {i}{f' (line {line})' if line else ''} is a "
                                 f"{'list' if isinstance(doc, list) else 'scalar'}, not an object: a manifest "
                                 "is a mapping with apiVersion and kind")
            if not doc.get("kind"):
                continue
            if is_xr(doc):
                xrs.append(admitted(doc))
            else:
                others.append(doc)
    return xrs, others
