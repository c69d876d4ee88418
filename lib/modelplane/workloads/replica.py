"""Assemble a ModelReplica's remote objects and read its status back.

``assemble`` is pure: a parsed ModelReplica in, ``Child`` records out, one per
remote object, each named ``dns_label(replica, engine, kind)`` so names are
stable and unique in the control-plane namespace. ``fn.py`` wraps each
manifest in a provider-kubernetes Object for the replica's cluster.

Shapes, per engine: Standalone -> Deployment + Service; Leader/Worker -> LWS +
InferencePool + endpoint picker. Under PrefillDecode both engines share one
InferencePool and one P/D endpoint picker (``disaggregated``). The replica's
HTTPRoute on the cluster gateway serves ``/<namespace>/<replica>/`` (rewritten
to ``/``): the replica's own URL. ModelServices reach it through a route of
their own on this cluster (lib/routing/service.py), so the replica publishes
its backend references (``status_refs``).

The replica route carries a request timeout, as every route Modelplane composes
(``modelplane.routing.timeouts`` says why a route without one cuts answers at
Envoy's 15 s): the ModelService API's default, since no ModelService speaks for
a replica's own URL.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane import conditions as C
from modelplane import labels as L
from modelplane.errors import InputError
from modelplane.naming import dns_label
from modelplane.schemas.model_service import ModelServiceSpecTimeouts

from . import claims, gang, pods, standalone
from . import disaggregated as pd

FUNCTION = "compose-model-replica"
ROUTE_API = "gateway.networking.k8s.io/v1"
POOL_GROUP = "inference.networking.k8s.io"
# A sibling of modelplane.routing cannot import it: both read the API's default.
REQUEST_TIMEOUT: str = ModelServiceSpecTimeouts().request or "1h"

# Condition type and reasons this function reports (beside Ready).
SERVING = C.SERVING


@dataclass(frozen=True)
class Child:
    """One remote object of the replica."""

    name: str                      # composition resource name and Object name
    manifest: dict
    ready_cel: str | None = None   # set for workloads: their readiness query
    replicas: int = 0              # desired replicas (workloads)


@dataclass(frozen=True)
class Replica:
    """What the shapes need to know about the replica being composed."""

    name: str
    namespace: str
    deployment: str
    index: int
    cluster: str
    cache_pvc: str | None

    def object_name(self, *parts: object) -> str:
        return dns_label(self.name, *parts)

    def labels(self) -> dict[str, str]:
        return {L.MANAGED_BY: FUNCTION, L.DEPLOYMENT: self.deployment,
                L.REPLICA: str(self.index), L.CLUSTER: self.cluster}

    def selector(self, engine: str) -> dict[str, str]:
        return {L.DEPLOYMENT: self.deployment, L.REPLICA: str(self.index), L.ENGINE: engine}


def rewrite_path(namespace: str, name: str) -> str:
    return f"/{namespace}/{name}/"


def assemble(mr: Any, name: str, namespace: str) -> list[Child]:
    """Every remote object of the replica (the route is separate: ``route``)."""
    r = Replica(name, namespace, mr.spec.deployment, mr.spec.index, mr.spec.cluster.name,
                mr.spec.modelCache.pvcName if mr.spec.modelCache else None)
    children: list[Child] = []
    disaggregated = (mr.spec.servingMode or "Unified") == "PrefillDecode"
    for i, engine in enumerate(mr.spec.engines):
        _check_engine(engine, i, disaggregated)
        children += _engine(r, engine, i, disaggregated)
    if disaggregated:
        children += _pd_routing(r)
    return children


def backend_refs(mr: Any, name: str) -> list[dict]:
    """Where the replica route sends traffic: one ref per engine, or the P/D pool."""
    if (mr.spec.servingMode or "Unified") == "PrefillDecode":
        return [{"group": POOL_GROUP, "kind": "InferencePool", "name": dns_label(name, "pd")}]
    refs = []
    for engine in mr.spec.engines:
        remote = dns_label(name, engine.name)
        if _is_gang(engine):
            ref = {"group": POOL_GROUP, "kind": "InferencePool", "name": remote}
        else:
            ref = {"name": remote, "port": pods.engine_port(engine.members[0].template)}
        if len(mr.spec.engines) > 1:
            ref["weight"] = engine.copies or 1
        refs.append(ref)
    return refs


def status_refs(refs: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Backend references spelled out in full (a Service's group and kind are implicit in a route)."""
    return [{"group": ref.get("group", ""), "kind": ref.get("kind", "Service"), **dict(ref)} for ref in refs]


def route(name: str, namespace: str, gateway: Mapping[str, str], refs: Sequence[Mapping[str, Any]],
          labels: Mapping[str, str]) -> dict:
    """The replica's HTTPRoute on its cluster's gateway."""
    prefix = rewrite_path(namespace, name)
    return {
        "apiVersion": ROUTE_API,
        "kind": "HTTPRoute",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "parentRefs": [{"name": gateway["name"], "namespace": gateway["namespace"]}],
            "rules": [
                # Direct: /<namespace>/<replica>/... rewritten to /...
                {"matches": [{"path": {"type": "PathPrefix", "value": prefix}}],
                 "filters": [{"type": "URLRewrite", "urlRewrite": {
                     "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}],
                 "backendRefs": [dict(ref) for ref in refs],
                 "timeouts": {"request": REQUEST_TIMEOUT}},
            ],
        },
    }


# ----- engines ----------------------------------------------------------------
def _is_gang(engine: Any) -> bool:
    return any(m.role != "Standalone" for m in engine.members)


def _check_engine(engine: Any, i: int, disaggregated: bool) -> None:
    field = f"spec.engines[{i}]"
    roles = [m.role for m in engine.members]
    if roles != ["Standalone"] and not (roles.count("Leader") == 1 and roles.count("Worker") == 1
                                        and len(roles) == 2):
        raise InputError(f"{field}.members", "need exactly one Standalone member, or one Leader and one "
                         "Worker member (a LeaderWorkerSet has one worker template): merge the Worker members")
    if disaggregated and engine.phase not in pd.ROLES:
        raise InputError(f"{field}.phase", "PrefillDecode engines need phase Prefill or Decode")
    for j, m in enumerate(engine.members):
        for k, d in enumerate(m.devices or []):
            if d.claim == "DRA" and not d.deviceClassName:
                raise InputError(f"{field}.members[{j}].devices[{k}].deviceClassName",
                                 "a DRA device needs its DeviceClass: set deviceClassName")


def _engine(r: Replica, engine: Any, i: int, disaggregated: bool) -> list[Child]:
    out: list[Child] = []
    remote = dns_label(r.name, engine.name)
    selector = r.selector(engine.name)
    labels = r.labels()
    copies = engine.copies or 1
    role = pd.ROLES.get(engine.phase or "") if disaggregated else None
    decode = role == "decode"

    def pod_for(member: Any, leader_address: Mapping[str, Any], serving: bool) -> dict:
        claim = None
        dra = claims.dra_devices(member.devices)
        if dra:
            claim = dns_label(r.name, engine.name, member.role.lower())
            out.append(Child(r.object_name(engine.name, member.role.lower(), "claims"),
                             claims.claim_template(claim, r.namespace, dra, labels)))
        pod_labels = {**selector, L.ROLE: member.role.lower()}
        if role:
            pod_labels[pd.ROLE_LABEL] = role
            if serving:
                pod_labels[pd.SERVING_LABEL] = "true"
        port = pods.engine_port(member.template)
        sidecar = decode and serving
        return pods.pod_template(member.template, pods.PodOptions(
            labels=pod_labels, pool=member.pool, cache_pvc=r.cache_pvc, claim_template=claim,
            leader_address=leader_address,
            extra_args=(f"--port={pd.DECODE_ENGINE_PORT}",) if sidecar else (),
            init_containers=(pd.routing_sidecar(port),) if sidecar else ()))

    if not _is_gang(engine):
        member = engine.members[0]
        own_ip = {"valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
        pod = pod_for(member, own_ip, serving=True)
        out.append(Child(r.object_name(engine.name, "deployment"),
                         standalone.deployment(remote, r.namespace, copies, selector, pod, labels),
                         ready_cel=standalone.READY_CEL, replicas=copies))
        if not disaggregated:
            out.append(Child(r.object_name(engine.name, "service"),
                             standalone.service(remote, r.namespace, selector,
                                                pods.engine_port(member.template), labels)))
        return out

    leader = next(m for m in engine.members if m.role == "Leader")
    worker = next(m for m in engine.members if m.role == "Worker")
    leader_pod = pod_for(leader, gang.LEADER_ADDRESS, serving=True)
    worker_pod = pod_for(worker, gang.LEADER_ADDRESS, serving=False)
    out.append(Child(r.object_name(engine.name, "lws"),
                     gang.leader_worker_set(remote, r.namespace, copies, 1 + worker.nodes,
                                            leader_pod, worker_pod, labels),
                     ready_cel=gang.READY_CEL, replicas=copies))
    if not disaggregated:
        epp = dns_label(r.name, engine.name, "epp")
        pool_selector = {**selector, gang.LEADER_INDEX_LABEL: "0"}
        out.append(Child(r.object_name(engine.name, "pool"),
                         gang.inference_pool(remote, r.namespace, pool_selector,
                                             pods.engine_port(leader.template), epp, labels)))
        out += _epp(r, epp, remote, gang.default_epp_config(), engine.name)
    return out


def _pd_routing(r: Replica) -> list[Child]:
    """One pool over every serving pod of both phases, and the P/D endpoint picker."""
    pool = dns_label(r.name, "pd")
    epp = dns_label(r.name, "pd", "epp")
    selector = {L.DEPLOYMENT: r.deployment, L.REPLICA: str(r.index), pd.SERVING_LABEL: "true"}
    out = [Child(r.object_name("pd", "pool"),
                 gang.inference_pool(pool, r.namespace, selector, pods.DEFAULT_PORT, epp, r.labels()))]
    return out + _epp(r, epp, pool, pd.pd_epp_config(), "pd")


def _epp(r: Replica, name: str, pool: str, config: Mapping[str, Any], part: str) -> list[Child]:
    pieces = gang.endpoint_picker(name, r.namespace, pool, config, r.labels())
    out = []
    for suffix, manifest in sorted(pieces.items()):
        if suffix == "deployment":
            out.append(Child(r.object_name(part, "epp", suffix), manifest,
                             ready_cel=standalone.READY_CEL, replicas=1))
        else:
            out.append(Child(r.object_name(part, "epp", suffix), manifest))
    return out


# ----- status -----------------------------------------------------------------
def workload_ready(child: Child, remote_status: Mapping[str, Any]) -> bool:
    """A workload is ready when its remote status reports every replica ready."""
    if child.ready_cel == gang.READY_CEL:
        return gang.is_group_ready(remote_status, child.replicas)
    return standalone.is_available(remote_status, child.replicas)
