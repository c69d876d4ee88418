"""The same fleet through ``modelplane simulate --lab``, recorded for the comparison with Crossplane.

The e2e lab's workload clusters are the clusters the control plane registers
as Existing InferenceClusters. Before the control plane starts, ``record``
runs ``modelplane simulate --lab`` over the very manifests the suite applies
(``<state>/fleet`` plus the ML team's folders) on those very clusters, keeps
what it printed (``--show resources``: every XR with its status, every
composed resource) and what ran on each cluster (every pod: node, pool, phase,
allocated devices), then empties the clusters again (``LabPhysical.reset``),
so Crossplane starts from the same empty clusters simulate did. Running the
two one after the other on one lab keeps the machine's two cores for one of
them at a time.

The rest are pure functions that turn either side into comparable rows.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from modelplane.render import reader

RECORD = "simulate-lab.json"
INPUT = "simulate-lab"
TIMEOUT = 1200.0
ROLE_LABEL = "modelplane.ai/role"

Key = tuple[str, str, str]   # kind, namespace, name


def stage(fleet: Path, teams: Iterable[Path], dest: Path) -> Path:
    """One folder with the fleet's files and each team folder's (``<team>-<file>``): what the suite applies."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for f in sorted(fleet.glob("*.yaml")):
        shutil.copyfile(f, dest / f.name)
    for team in teams:
        for f in sorted(Path(team).glob("*.yaml")):
            shutil.copyfile(f, dest / f"{Path(team).name}-{f.name}")
    return dest


def record(directory: Path, lab_root: Path, out: Path, *, timeout: float = TIMEOUT) -> dict[str, Any]:
    """Run ``modelplane simulate DIR --lab LAB --show resources``, read back what ran on each lab
    cluster, write both to ``out`` (JSON), and empty the lab's clusters again."""
    from modelplane.lab import LabPhysical, Remote

    argv = [sys.executable, "-m", "modelplane.cli", "simulate", str(directory), "--lab", str(lab_root),
            "--show", "resources"]
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    seconds = round(time.monotonic() - start, 1)
    remote = Remote.load(lab_root)
    result = {
        "argv": argv[1:],
        "returncode": done.returncode,
        "stderr": done.stderr,
        "seconds": seconds,
        "resources": [d for d in reader.load_all(done.stdout) if isinstance(d, dict)],
        "pods": {name: remote.placements(name) for name in sorted(remote.clients)},
    }
    out.write_text(json.dumps(result, indent=1, sort_keys=True))
    LabPhysical(remote)   # resets every cluster: Crossplane starts where simulate started
    return result


def load(out: Path) -> dict[str, Any]:
    if not out.is_file():
        raise FileNotFoundError(f"no simulate --lab record at {out}: start the environment with "
                                f"`modelplane e2e up examples/platform --simulate-lab examples/ml-team`")
    return json.loads(out.read_text())


# --- the comparison's rows (pure) ----------------------------------------------------------


def key_of(obj: Mapping[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return (obj.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))


def is_xr(obj: Mapping[str, Any]) -> bool:
    return str(obj.get("apiVersion", "")).startswith("modelplane.ai/")


def xrs(docs: Iterable[Mapping[str, Any]]) -> dict[Key, Mapping[str, Any]]:
    return {key_of(d): d for d in docs if is_xr(d)}


def controller(obj: Mapping[str, Any]) -> Key | None:
    """The XR that composed ``obj`` (its controller owner reference), as (kind, namespace, name):
    namespaced XRs compose into their own namespace; a cluster-scoped owner has none."""
    meta = obj.get("metadata") or {}
    ref = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
    if ref is None:
        return None
    return ref.get("kind", ""), meta.get("namespace", ""), ref.get("name", "")


def ref_key(api_version: str, kind: str, name: str) -> tuple[str, str, str]:
    """A composed resource within its XR: (API group, kind, name). The group matters: an
    InferenceCluster composes a ClusterProviderConfig of provider-kubernetes and one of
    provider-helm under the same name."""
    return api_version.rpartition("/")[0], kind, name


def composed(docs: Iterable[Mapping[str, Any]]) -> dict[Key, dict[tuple[str, str, str], Mapping[str, Any]]]:
    """XR -> {(group, kind, name): resource} for every composed resource of the stream (child XRs
    included), by controller reference. A cluster-scoped XR's resources are keyed under namespace ''."""
    docs = list(docs)
    known = set(xrs(docs))
    out: dict[Key, dict[tuple[str, str, str], Mapping[str, Any]]] = {}
    for d in docs:
        owner = controller(d)
        if owner is None:
            continue
        key = owner if owner in known else (owner[0], "", owner[2])   # a cluster-scoped XR
        meta = d.get("metadata") or {}
        out.setdefault(key, {})[ref_key(d.get("apiVersion", ""), d.get("kind", ""), meta.get("name", ""))] = d
    return out


def ready(obj: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def pod_rows(pods: Mapping[str, Iterable[Mapping[str, Any]]], namespaces: Iterable[str]) -> list[tuple]:
    """Every pod in ``namespaces`` (the ML team's) as a comparable row, one per pod:
    (cluster, namespace, what it runs, pool, phase, devices allocated). A model pod (role label)
    runs ``deployment/replica/engine/role``; any other pod (endpoint picker, cache hydration) runs
    its Job or its owner's instance label, and its pool is left out: nothing pins it to one.
    Pod names are left out too: ReplicaSets, Jobs and LeaderWorkerSets add generated suffixes."""
    wanted = set(namespaces)
    rows = []
    for cluster, items in sorted(pods.items()):
        for p in items:
            if p["namespace"] not in wanted:
                continue
            labels = p.get("labels") or {}
            if ROLE_LABEL in labels:
                what = "/".join(labels.get(k, "") for k in ("modelplane.ai/deployment", "modelplane.ai/replica",
                                                            "modelplane.ai/engine", ROLE_LABEL))
                pool = p.get("pool", "")
            else:
                what = labels.get("job-name") or labels.get("app.kubernetes.io/instance") or p["name"]
                pool = ""
            rows.append((cluster, p["namespace"], what, pool, p.get("phase", ""), len(p.get("devices") or [])))
    return sorted(rows)


# --- what differs for reasons no render can change (docs/e2e-crossplane.md) -------------------------

_CREATED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/")


def without_known_differences(kind: str, spec: Mapping[str, Any]) -> dict:
    """``spec`` (of a composed resource or XR, on either side) without what differs by nature:

    - a ModelReplica's ``order`` starts with its ModelDeployment's creationTimestamp: the API
      server's clock under Crossplane, simulate's own clock (2026-01-01 onwards) in simulate;
      the rest of the key (namespace, deployment, index) must still agree;
    - a provider-helm Release's ``forProvider.chart.pullSecretRef: {name: ""}``: provider-helm
      v1.3.0 declares it as a struct with ``omitempty`` (``apis/namespaced/release/v1beta1/types.go:51``),
      which Go's encoding/json never omits, so the provider's first update of the Release (its
      finalizer) writes it; nothing composes or reads it;
    - a Service's ``clusterIP``/``clusterIPs``: the API server allocates them, a different one
      for the live object and for the dry-run that defaults simulate's copy."""
    out = json.loads(json.dumps(spec))
    if kind == "Service":
        out.pop("clusterIP", None)
        out.pop("clusterIPs", None)
    if kind == "ModelReplica" and isinstance(out.get("order"), str):
        out["order"] = _CREATED.sub("<creationTimestamp>/", out["order"])
    chart = (out.get("forProvider") or {}).get("chart") if kind == "Release" else None
    if isinstance(chart, dict) and chart.get("pullSecretRef") == {"name": ""}:
        del chart["pullSecretRef"]
    return out
