"""Builders for compose-model-cache: the ml-team seed cache, clusters, remote Job
status and the children as observed on the next call."""
from __future__ import annotations

import copy

import yaml
from modelplane import paths

from tests.support import desired, request, run, status

FN = "compose-model-cache"
NS = "ml-team"
SEED = yaml.safe_load((paths.EXAMPLES / "ml-team" / "model-cache.yaml").read_text())


def cache(token: bool = True, revision: str = "main", selector: dict | None = None) -> dict:
    out = copy.deepcopy(SEED)
    hf = out["spec"]["source"]["huggingFace"]
    hf["revision"] = revision
    if not token:
        hf.pop("tokenSecretRef")
    if selector is not None:
        out["spec"]["clusterSelector"] = {"matchLabels": selector}
    return out


def cluster(name: str, provider_config: bool = True, storage_class: str | None = "modelplane-rwx") -> dict:
    st: dict = {}
    if provider_config:
        st["providerConfigName"] = name
    if storage_class:
        st["cache"] = {"storageClassName": storage_class}
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster",
            "metadata": {"name": name, "labels": {"tier": "frontier"}}, "status": st}


def job_status(**fields) -> dict:
    conds = []
    for typ in ("Complete", "Failed"):
        if typ in fields:
            conds.append({"type": typ, "status": "True", "message": fields.pop(typ)})
    return {**fields, **({"conditions": conds} if conds else {})}


def observed_after(rsp, job: dict | None = None, pvc_phase: str | None = None) -> dict:
    """Children as observed next time, with remote Job/PVC status under atProvider.manifest."""
    out = {}
    for name, obj in desired(rsp).items():
        obj = copy.deepcopy(obj)
        remote = None
        if name.startswith("job-") and job is not None:
            remote = job
        if name.startswith("pvc-") and pvc_phase:
            remote = {"phase": pvc_phase}
        if remote is not None:
            manifest = copy.deepcopy(obj["spec"]["forProvider"]["manifest"])
            manifest["status"] = remote
            obj["status"] = {"atProvider": {"manifest": manifest}}
        out[name] = obj
    return out


def go(xr: dict, clusters: list[dict] | None, observed: dict | None = None):
    return run(FN, request(xr, observed=observed, required=None if clusters is None else {"clusters": clusters}))


def entry(rsp, name: str) -> dict:
    return {e["name"]: e for e in status(rsp)["clusters"]}[name]
