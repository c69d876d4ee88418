"""The statuses controllers write back for composed resources, shaped like upstream's.

``modelplane simulate`` plays every controller the composed resources would
meet, and each status it writes passes its kind's upstream schema:

- managed resources (cloud, Helm, provider configs, Usages) report
  crossplane-runtime ``Ready``/``Synced``; a Helm Release is ``deployed``;
  the cloud fields a function reads back are reported as the provider
  does (``cloud_at_provider``: an AKS cluster's identity, a subnet's ID);
- a provider-kubernetes ``Object`` carries the remote object as observed in
  ``status.atProvider.manifest`` and derives ``Ready`` from it with its
  readiness policy, as the provider does: ``SuccessfulCreate``;
  ``DeriveFromObject`` (the remote object's own ``Ready`` condition);
  ``AllTrue``; ``DeriveFromCelQuery`` (the query, evaluated with
  ``modelplane.cel`` against what ``readiness_view`` keeps of the observed
  object: the scalar fields and conditions such queries test). Workloads get the status
  the physical model earned them (``physical``/``controllers``); a DaemonSet (no node
  daemons run here) reports no pod to wait for;
- Gateway API and Envoy Gateway kinds report their own conditions
  (``Accepted``, ``Programmed``, ``ResolvedRefs``, with reason and message);
  Gateways and LoadBalancer Services get addresses (``addresses``).

A resource named with ``--unready`` reports ``Ready=False`` and no remote
status; one on a cluster that is down keeps its last observed remote object
and reports ``Synced=False``/``Ready=False``, as the provider does when it
cannot reach the cluster. Condition times are the simulated clock at the
last transition (``restamp``).
"""
from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from modelplane import cel
from modelplane.simulate.addresses import AddressBook

__all__ = ["AddressBook", "Place", "composed_status", "remote_status", "restamp"]

GATEWAY_GROUP = "gateway.networking.k8s.io"
ENVOY_CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"
OBJECT_API = "kubernetes.m.crossplane.io/"
WORKLOAD_KINDS = ("Deployment", "LeaderWorkerSet", "Job", "StatefulSet")


@dataclass(frozen=True)
class Place:
    """Where a resource lives and what the controllers there can see."""

    name: str                                                   # cluster name, or "control-plane"
    now: str
    book: AddressBook
    workload: Callable[[str, str, str], dict | None] = lambda kind, ns, name: None
    generation: Callable[[str, str, str], int] = lambda kind, ns, name: 1
    has: Callable[[str, str, str], bool] = lambda kind, ns, name: True


# ----- conditions ---------------------------------------------------------------
def _xp(typ: str, status: bool, reason: str, now: str, message: str = "") -> dict:
    cond = {"type": typ, "status": "True" if status else "False", "reason": reason, "lastTransitionTime": now}
    if message:
        cond["message"] = message
    return cond


def _meta_cond(typ: str, status: bool, reason: str, message: str, now: str, generation: int = 1) -> dict:
    """A metav1.Condition: every field set (Gateway API, LWS and Envoy require them)."""
    return {"type": typ, "status": "True" if status else "False", "reason": reason, "message": message,
            "observedGeneration": generation, "lastTransitionTime": now}


def restamp(new: Any, old: Any) -> Any:
    """``new`` with the transition times of ``old`` kept wherever a condition did not change.

    Walks both statuses together; in every ``conditions`` list a condition whose
    type, status and reason are unchanged keeps its times (Kubernetes and
    crossplane-runtime only move them on a transition).
    """
    if isinstance(new, dict) and isinstance(old, dict):
        for key, value in new.items():
            if key == "conditions" and isinstance(value, list) and isinstance(old.get(key), list):
                before = {c.get("type"): c for c in old[key] if isinstance(c, dict)}
                for cond in value:
                    prev = before.get(cond.get("type")) if isinstance(cond, dict) else None
                    if prev and all(prev.get(k) == cond.get(k) for k in ("status", "reason")):
                        for t in ("lastTransitionTime", "lastProbeTime", "lastUpdateTime"):
                            if t in cond and t in prev:
                                cond[t] = prev[t]
            else:
                restamp(value, old.get(key))
    elif isinstance(new, list) and isinstance(old, list):
        for a, b in zip(new, old):
            restamp(a, b)
    return new


# ----- remote objects ------------------------------------------------------------
def remote_status(manifest: Mapping[str, Any], place: Place) -> dict:
    """The status the remote object reports on its cluster ({} for kinds without one)."""
    kind = manifest.get("kind", "")
    api = manifest.get("apiVersion", "")
    spec = manifest.get("spec") or {}
    meta = manifest.get("metadata") or {}
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    if kind in WORKLOAD_KINDS:
        return place.workload(kind, ns, name) or {}
    if kind == "PersistentVolumeClaim":
        modes = spec.get("accessModes") or ["ReadWriteMany"]
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
        return {"phase": "Bound", "accessModes": modes, "capacity": {"storage": storage}}
    if kind == "Namespace":
        return {"phase": "Active"}
    if kind == "DaemonSet":
        # No node daemons run here (the GKE driver installer): settled, with no pod to wait for.
        gen = int(meta.get("generation") or 1)
        return {"currentNumberScheduled": 0, "desiredNumberScheduled": 0, "numberMisscheduled": 0,
                "numberReady": 0, "observedGeneration": gen}
    if kind == "Service":
        if spec.get("type") == "LoadBalancer":
            return {"loadBalancer": {"ingress": [{"ip": place.book.address(f"{place.name}/Service/{ns}/{name}")}]}}
        return {"loadBalancer": {}}
    if api.startswith(GATEWAY_GROUP + "/"):
        return _gateway_api(kind, manifest, place)
    if api.startswith("inference.networking.k8s.io/") and kind == "InferencePool":
        return _inference_pool(manifest, place)
    if api.startswith("gateway.envoyproxy.io/") and kind == "Backend":
        gen = int(meta.get("generation") or 1)
        return {"conditions": [_meta_cond("Accepted", True, "Accepted", "The Backend was accepted", place.now, gen)]}
    return {}


def _gateway_api(kind: str, manifest: Mapping[str, Any], place: Place) -> dict:
    spec = manifest.get("spec") or {}
    meta = manifest.get("metadata") or {}
    gen = int(meta.get("generation") or 1)
    now = place.now
    if kind == "GatewayClass":
        return {"conditions": [_meta_cond("Accepted", True, "Accepted", "Valid GatewayClass", now, gen)]}
    if kind == "Gateway":
        key = f"{place.name}/Gateway/{meta.get('namespace', '')}/{meta.get('name', '')}"
        return {
            "addresses": [{"type": "IPAddress", "value": place.book.address(key)}],
            "conditions": [
                _meta_cond("Accepted", True, "Accepted", "The Gateway has been scheduled by Envoy Gateway", now, gen),
                _meta_cond("Programmed", True, "Programmed", "Address assigned to the Gateway, 1/1 envoy replicas available", now, gen),
            ],
            # No listener status: attached routes are not counted here.
        }
    if kind == "HTTPRoute":
        return {"parents": [_route_parent(ref, manifest, place, gen) for ref in spec.get("parentRefs") or []]}
    return {}


def _route_parent(ref: Mapping[str, Any], route: Mapping[str, Any], place: Place, gen: int) -> dict:
    meta = route.get("metadata") or {}
    ns = ref.get("namespace") or meta.get("namespace", "")
    accepted = place.has("Gateway", ns, ref.get("name", ""))
    missing = []
    for rule in (route.get("spec") or {}).get("rules") or []:
        for b in rule.get("backendRefs") or []:
            kind = b.get("kind") or "Service"
            if not place.has(kind, b.get("namespace") or meta.get("namespace", ""), b.get("name", "")):
                missing.append(f"{kind} {b.get('name', '')}")
    conds = [
        _meta_cond("Accepted", accepted, "Accepted" if accepted else "NoMatchingParent",
                   "Route is accepted" if accepted else f"Gateway {ns}/{ref.get('name', '')} not found", place.now, gen),
        _meta_cond("ResolvedRefs", not missing, "ResolvedRefs" if not missing else "BackendNotFound",
                   "Resolved all the Object references for the Route" if not missing
                   else f"{', '.join(sorted(set(missing)))} not found", place.now, gen),
    ]
    parent = {k: ref[k] for k in ("group", "kind", "name", "namespace", "sectionName", "port") if k in ref}
    return {"parentRef": parent, "controllerName": ENVOY_CONTROLLER, "conditions": conds}


def _inference_pool(manifest: Mapping[str, Any], place: Place) -> dict:
    # The pool's parent is the Gateway that routes to it: on a workload cluster, the cluster gateway.
    gen = int((manifest.get("metadata") or {}).get("generation") or 1)
    return {"parents": [{
        "parentRef": {"group": GATEWAY_GROUP, "kind": "Gateway", "name": "modelplane", "namespace": "modelplane-system"},
        "controllerName": ENVOY_CONTROLLER,
        "conditions": [
            _meta_cond("Accepted", True, "Accepted", "InferencePool has been accepted by the Gateway", place.now, gen),
            _meta_cond("ResolvedRefs", True, "ResolvedRefs", "Resolved the endpoint picker reference", place.now, gen),
        ],
    }]}


# ----- provider-kubernetes readiness ------------------------------------------------
_cel_memo: dict[tuple[str, str], tuple[bool, str]] = {}


def _scalars(fields: Any) -> dict:
    if not isinstance(fields, dict):
        return {}
    return {k: v for k, v in fields.items() if isinstance(v, (str, int, float, bool))}


def readiness_view(observed: Mapping[str, Any]) -> dict:
    """What a readiness query sees of the observed object.

    Its kind and generation, the scalar fields of its spec and status
    (``replicas``, ``readyReplicas``, ``succeeded``, ...) and its conditions'
    type, status and reason: what readiness queries test. Names, selectors,
    pod templates, addresses and prose are left out, so identical workloads
    in different places share one evaluation (CEL over a whole Deployment
    costs milliseconds, and a fleet has thousands).
    """
    meta = observed.get("metadata") or {}
    status = observed.get("status")
    view: dict[str, Any] = {"apiVersion": observed.get("apiVersion"), "kind": observed.get("kind"),
                            "metadata": {"generation": meta.get("generation", 1)},
                            "spec": _scalars(observed.get("spec"))}
    if isinstance(status, dict):
        view["status"] = _scalars(status)
        if isinstance(status.get("conditions"), list):
            view["status"]["conditions"] = [{k: c[k] for k in ("type", "status", "reason") if k in c}
                                            for c in status["conditions"] if isinstance(c, dict)]
    return view


def _cel_ready(query: str, observed: Mapping[str, Any]) -> tuple[bool, str]:
    observed = readiness_view(observed)
    key = (query, json.dumps(observed, sort_keys=True))
    hit = _cel_memo.get(key)
    if hit is None:
        try:
            value = cel.compile(query, library="kubernetes").evaluate({"object": observed})
            hit = (value is True, "" if isinstance(value, bool) else "the readiness query did not return a bool")
        except cel.CELError as err:
            hit = (False, f"cannot evaluate the readiness query: {err.message}")
        if len(_cel_memo) > 65536:
            _cel_memo.clear()
        _cel_memo[key] = hit
    return hit


def object_ready(obj: Mapping[str, Any], observed: Mapping[str, Any]) -> tuple[bool, str]:
    """(ready, message) as provider-kubernetes derives it from the observed remote object."""
    readiness = (obj.get("spec") or {}).get("readiness") or {}
    policy = readiness.get("policy") or "SuccessfulCreate"
    conditions = (observed.get("status") or {}).get("conditions") or []
    if policy == "SuccessfulCreate":
        return True, ""
    if policy == "DeriveFromObject":
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        return ready, "" if ready else "the remote object reports no Ready=True condition"
    if policy == "AllTrue":
        ok = bool(conditions) and all(c.get("status") == "True" for c in conditions)
        return ok, "" if ok else "not every condition of the remote object is True"
    if policy == "DeriveFromCelQuery":
        return _cel_ready(readiness.get("celQuery") or "", observed)
    return False, f"unknown readiness policy {policy!r}"


def observed_remote(manifest: Mapping[str, Any], place: Place) -> dict:
    """The remote object as the provider reads it back: the manifest, its generation and status."""
    meta = dict(manifest.get("metadata") or {})
    kind, ns, name = manifest.get("kind", ""), meta.get("namespace", ""), meta.get("name", "")
    meta["generation"] = place.generation(kind, ns, name) if kind in WORKLOAD_KINDS else 1
    out = {**manifest, "metadata": meta}   # shares the manifest's body: nothing here writes to it
    status = remote_status(out, place)
    if status:
        out["status"] = status
    return out


# ----- composed resources on the control plane -----------------------------------------
def _native(api: str) -> bool:
    """Kinds whose own controllers write their status (not crossplane-runtime managed resources)."""
    group = api.rpartition("/")[0]
    # "" is the core group (a ModelEndpoint's Service); an EndpointSlice has no status at all.
    return group in (GATEWAY_GROUP, "gateway.envoyproxy.io", "metallb.io", "inference.networking.k8s.io",
                     "", "discovery.k8s.io")


def composed_status(obj: Mapping[str, Any], place: Place, *, ready: bool = True, unreachable: str | None = None,
                    observed: Mapping[str, Any] | None = None, previous: Mapping[str, Any] | None = None) -> dict:
    """The status of one composed resource.

    ``ready=False`` leaves it unready on purpose (``--unready``);
    ``unreachable`` says why its cluster cannot be reached (``previous`` is
    its last status); ``observed`` is the remote object of an ``Object`` as
    read back.
    """
    api, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    now = place.now
    if _native(api):
        if kind == "IPAddressPool":
            return {"assignedIPv4": 0, "assignedIPv6": 0, "availableIPv4": 0, "availableIPv6": 0}
        return remote_status(obj, place) if ready else {}
    if not ready:
        return {"conditions": [_xp("Ready", False, "Creating", now, "left unready by modelplane simulate --unready"),
                               _xp("Synced", True, "ReconcileSuccess", now)]}
    if unreachable:
        out = {k: copy.deepcopy(v) for k, v in (previous or {}).items() if k != "conditions"}
        out["conditions"] = [_xp("Ready", False, "Unavailable", now, f"cluster {place.name} cannot be reached"),
                             _xp("Synced", False, "ReconcileError", now, f"cannot connect: {unreachable}")]
        return out
    if api.startswith(OBJECT_API) and kind == "Object":
        remote = dict(observed or {})
        ok, why = object_ready(obj, remote)
        return {"conditions": [_xp("Ready", ok, "Available" if ok else "Unavailable", now, why),
                               _xp("Synced", True, "ReconcileSuccess", now)],
                "atProvider": {"manifest": remote}}
    status: dict[str, Any] = {"conditions": [_xp("Ready", True, "Available", now),
                                             _xp("Synced", True, "ReconcileSuccess", now)]}
    if api.startswith("helm.m.crossplane.io/") and kind == "Release":
        status["atProvider"] = {"state": "deployed", "revision": 1}
    cloud = cloud_at_provider(obj)
    if cloud:
        status["atProvider"] = cloud
    return status


# ----- cloud fields read back ------------------------------------------------------
AZURE_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"   # documentation values, never a real tenant
AZURE_TENANT = "00000000-0000-0000-0000-000000000001"


def cloud_at_provider(obj: Mapping[str, Any]) -> dict:
    """What the cloud provider reports in ``status.atProvider`` that a function reads back.

    A real AKS cluster with a system-assigned identity reports its principal
    ID, and a real subnet its resource ID: compose-inference-cluster needs
    both before it composes the cluster identity's Network Contributor
    RoleAssignment (``platform.aks.role_assignment``), so a stand-in without
    them would never show it. IDs are derived from the names, so every run
    reports the same ones.
    """
    group, kind = obj.get("apiVersion", "").partition("/")[0], obj.get("kind", "")
    name = (obj.get("metadata") or {}).get("name", "")
    fp = (obj.get("spec") or {}).get("forProvider") or {}
    group_name = fp.get("resourceGroupName") or (fp.get("resourceGroupNameRef") or {}).get("name", "")
    base = f"/subscriptions/{AZURE_SUBSCRIPTION}/resourceGroups/{group_name}/providers"
    if group == "containerservice.azure.m.upbound.io" and kind == "KubernetesCluster":
        identity = fp.get("identity") or {}
        out: dict[str, Any] = {"id": f"{base}/Microsoft.ContainerService/managedClusters/{name}"}
        if identity.get("type") == "SystemAssigned":
            out["identity"] = {"type": "SystemAssigned", "tenantId": AZURE_TENANT,
                               "principalId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"aks-identity/{name}"))}
        return out
    if group == "network.azure.m.upbound.io" and kind == "Subnet":
        vnet = fp.get("virtualNetworkName") or (fp.get("virtualNetworkNameRef") or {}).get("name", "")
        return {"id": f"{base}/Microsoft.Network/virtualNetworks/{vnet}/subnets/{name}"}
    return {}
