"""kube-scheduler and the DRA allocator, played on a simulated cluster's hardware.

A pod binds to the first node (in pool, then node order: the fill the fleet
scheduler's arithmetic assumes) where

- its ``nodeSelector`` and required node affinity match the node's labels,
- every ``NoSchedule``/``NoExecute`` taint of the node is tolerated,
- its containers' cpu/memory requests and one more pod fit what is left of
  the node's allocatable room,
- and every request of its ResourceClaimTemplates finds its devices among
  the node's free ones: devices of the request's DeviceClass (the class's CEL
  selectors) that satisfy every CEL selector of the request, evaluated with
  ``modelplane.cel`` against the devices the node publishes. This reads the
  composed claim, never the fleet scheduler's decision, so a placement the
  fleet got wrong shows up here as a Pending pod.

Pods are tried in creation order. A gang (one LeaderWorkerSet group) binds
all of its pods on distinct nodes, or none. A pod that fits nowhere stays
Pending with a reason shaped like kube-scheduler's: ``0/4 nodes are
available: 3 node(s) didn't match Pod's node affinity/selector, 1 node(s)
cannot allocate all claims (request gpu: 5 wanted, 3 free match).``

Requests are ``exactly`` requests (``ExactCount`` or ``All``); devices are
taken first-fit within a node. Claim ``constraints`` and ``firstAvailable``
are not composed by Modelplane and are not modelled (the pod says so).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from modelplane import cel
from modelplane.physical.hardware import Hardware, Node
from modelplane.quantity import Quantity, QuantityError

_BLOCKING = ("NoSchedule", "NoExecute")


@dataclass(eq=False)
class Pod:
    name: str
    namespace: str
    spec: Mapping[str, Any]
    seq: tuple[int, ...]                  # creation order
    gang: str | None = None               # pods of one gang bind together, each on its own node
    rev: str = ""                         # the owner's template revision it was created from
    index: int = 0                        # replica or group index within its owner
    node: str | None = None
    devices: tuple[str, ...] = ()         # device names allocated on ``node``
    reason: str = ""                      # why it is Pending
    done: bool = False                    # a Job pod that ran to completion (holds nothing)
    started: bool = False                 # the kubelet started its containers (``kubelet``)
    waiting: str = ""                     # why the kubelet cannot start them (a Secret it lacks)
    cpu: Decimal = field(init=False)
    memory: Decimal = field(init=False)

    def __post_init__(self) -> None:
        self.cpu, self.memory = _requests(self.spec)

    @property
    def bound(self) -> bool:
        return self.node is not None

    @property
    def ready(self) -> bool:
        """Bound and not held by the kubelet: what a workload counts as available."""
        return self.node is not None and not self.waiting


@dataclass(frozen=True)
class Request:
    """One device request of a claim: ``count`` devices of ``device_class`` passing ``selectors``."""

    name: str
    device_class: str
    selectors: tuple[str, ...] = ()
    count: int = 1
    all: bool = False                     # allocationMode All


@dataclass
class NodeUse:
    """What the bound pods take from one node."""

    devices: set[str] = field(default_factory=set)
    cpu: Decimal = Decimal(0)
    memory: Decimal = Decimal(0)
    pods: int = 0


# ----- reading pods ------------------------------------------------------------
def claim_requests(pod: Pod, templates: Mapping[tuple[str, str], Mapping[str, Any]]) -> tuple[list[Request], str]:
    """The device requests of every claim of ``pod``, or a reason why they cannot be read."""
    out: list[Request] = []
    for claim in (pod.spec.get("resourceClaims") or []):
        name = claim.get("resourceClaimTemplateName")
        if not name:
            return [], f"claim {claim.get('name', '')}: only ResourceClaimTemplates are modelled"
        template = templates.get((pod.namespace, name))
        if template is None:
            return [], f'resourceclaimtemplate "{name}" not found'
        devices = (((template.get("spec") or {}).get("spec") or {}).get("devices") or {})
        if devices.get("constraints"):
            return [], f"ResourceClaimTemplate {name}: device constraints are not modelled"
        for req in devices.get("requests") or []:
            exactly = req.get("exactly")
            if not isinstance(exactly, Mapping):
                return [], f"ResourceClaimTemplate {name}: request {req.get('name', '')}: only 'exactly' requests are modelled"
            mode = exactly.get("allocationMode") or "ExactCount"
            out.append(Request(
                name=req.get("name", ""),
                device_class=exactly.get("deviceClassName", ""),
                selectors=tuple(str((s.get("cel") or {}).get("expression", "")) for s in exactly.get("selectors") or []),
                count=int(exactly.get("count") or 1),
                all=mode == "All",
            ))
    return out, ""


def _requests(spec: Mapping[str, Any]) -> tuple[Decimal, Decimal]:
    """cpu and memory a pod asks for: containers summed, or its largest init container."""

    def of(containers: Iterable[Mapping[str, Any]], res: str) -> list[Decimal]:
        vals = []
        for c in containers:
            raw = ((c.get("resources") or {}).get("requests") or {}).get(res)
            try:
                vals.append(Quantity(raw).value if raw is not None else Decimal(0))
            except (QuantityError, TypeError):
                vals.append(Decimal(0))
        return vals

    containers = spec.get("containers") or []
    inits = spec.get("initContainers") or []
    return tuple(max(sum(of(containers, r), Decimal(0)), max(of(inits, r), default=Decimal(0)))  # type: ignore[return-value]
                 for r in ("cpu", "memory"))


# ----- node filters --------------------------------------------------------------
def _selector_ok(spec: Mapping[str, Any], node: Node) -> bool:
    if any(node.labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms")
    if not terms:
        return True
    return any(all(_expression(e, node.labels) for e in t.get("matchExpressions") or []) for t in terms)


def _expression(e: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op, values = e.get("key", ""), e.get("operator", ""), list(e.get("values") or [])
    have = labels.get(key)
    if op == "In":
        return have in values
    if op == "NotIn":
        return have not in values
    if op == "Exists":
        return have is not None
    if op == "DoesNotExist":
        return have is None
    if op in ("Gt", "Lt") and have is not None and values:
        try:
            return int(have) > int(values[0]) if op == "Gt" else int(have) < int(values[0])
        except ValueError:
            return False
    return False


def tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, str]) -> bool:
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t.get("key") == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _untolerated(spec: Mapping[str, Any], node: Node) -> Mapping[str, str] | None:
    tolerations = spec.get("tolerations") or []
    for taint in node.taints:
        if taint.get("effect") in _BLOCKING and not tolerates(tolerations, taint):
            return taint
    return None


# ----- DRA ---------------------------------------------------------------------
def _class_ok(selectors: tuple[str, ...], device: cel.Device) -> bool:
    return all(cel.match(expr, device).matched for expr in selectors)


def allocate(requests: Sequence[Request], node: Node, taken: set[str],
             device_classes: Mapping[str, tuple[str, ...]]) -> tuple[list[str] | None, str]:
    """Device names for every request on ``node`` (first fit), or None and why not."""
    chosen: list[str] = []
    for req in requests:
        klass = device_classes.get(req.device_class)
        if klass is None:
            return None, f"request {req.name}: DeviceClass {req.device_class!r} does not exist"
        free = [d for d in node.devices if d.name not in taken and d.name not in chosen]
        fits, why = [], ""
        for d in free:
            if not _class_ok(klass, d.device):
                why = why or f"not in DeviceClass {req.device_class}"
                continue
            for i, expr in enumerate(req.selectors, 1):
                result = cel.match(expr, d.device)
                if not result.matched:
                    why = why or (f"selector {i}: {result.error}" if result.error else f"selector {i} false")
                    break
            else:
                fits.append(d.name)
        want = len(fits) if req.all else req.count
        if (req.all and not fits) or len(fits) < want:
            detail = f"; others: {why}" if why else ""
            wanted = "all matching" if req.all else str(req.count)
            return None, f"request {req.name}: {wanted} wanted, {len(fits)} of {len(free)} free match{detail}"
        chosen += fits[:want]
    return chosen, ""


# ----- binding -------------------------------------------------------------------
def _fit(pod: Pod, requests: Sequence[Request], node: Node, use: NodeUse,
         device_classes: Mapping[str, tuple[str, ...]]) -> tuple[list[str] | None, str]:
    if not _selector_ok(pod.spec, node):
        return None, "node(s) didn't match Pod's node affinity/selector"
    taint = _untolerated(pod.spec, node)
    if taint is not None:
        value = f": {taint['value']}" if taint.get("value") else ""
        return None, f"node(s) had untolerated taint {{{taint['key']}{value}}}"
    cpu, memory = pod.cpu, pod.memory
    room = node.allocatable
    if "pods" in room and use.pods + 1 > room["pods"].value:
        return None, "Too many pods"
    if "cpu" in room and use.cpu + cpu > room["cpu"].value:
        return None, "Insufficient cpu"
    if "memory" in room and use.memory + memory > room["memory"].value:
        return None, "Insufficient memory"
    devices, why = allocate(requests, node, use.devices, device_classes)
    if devices is None:
        return None, f"node(s) cannot allocate all claims ({why})"
    return devices, ""


def _take(pod: Pod, node: Node, devices: list[str], use: NodeUse) -> None:
    use.devices.update(devices)
    use.cpu += pod.cpu
    use.memory += pod.memory
    use.pods += 1
    pod.node, pod.devices, pod.reason = node.name, tuple(devices), ""


def _give(pod: Pod, use: NodeUse) -> None:
    use.devices.difference_update(pod.devices)
    use.cpu -= pod.cpu
    use.memory -= pod.memory
    use.pods -= 1
    pod.node, pod.devices = None, ()


def _message(total: int, reasons: Mapping[str, int]) -> str:
    parts = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
    detail = ", ".join(f"{n} {r}" for r, n in parts)
    return f"0/{total} nodes are available: {detail}." if detail else f"0/{total} nodes are available."


def usage(hardware: Hardware, pods: Iterable[Pod]) -> dict[str, NodeUse]:
    """What the bound pods take, per node."""
    use = {n.name: NodeUse() for n in hardware.nodes}
    for pod in pods:
        if pod.bound and not pod.done and pod.node in use:
            u = use[pod.node]
            u.devices.update(pod.devices)
            u.cpu += pod.cpu
            u.memory += pod.memory
            u.pods += 1
    return use


def _place(pod: Pod, requests: Sequence[Request], hardware: Hardware, use: dict[str, NodeUse],
           avoid: set[str]) -> tuple[bool, dict[str, int]]:
    reasons: dict[str, int] = {}
    for node in hardware.nodes:
        if node.name in avoid:
            reasons["node(s) already hold a pod of this gang"] = reasons.get("node(s) already hold a pod of this gang", 0) + 1
            continue
        devices, why = _fit(pod, requests, node, use[node.name], hardware.device_classes)
        if devices is None:
            reasons[why] = reasons.get(why, 0) + 1
            continue
        _take(pod, node, devices, use[node.name])
        return True, reasons
    return False, reasons


def schedule(pods: Sequence[Pod], hardware: Hardware,
             templates: Mapping[tuple[str, str], Mapping[str, Any]]) -> bool:
    """Bind every Pending pod that fits, in creation order; True when any pod was bound.

    ``pods`` are all of the cluster's pods (bound ones hold their nodes and devices).
    """
    use = usage(hardware, pods)
    pending = sorted((p for p in pods if not p.bound and not p.done), key=lambda p: p.seq)
    bound_any = False
    seen_gangs: set[str] = set()
    for pod in pending:
        if pod.gang is not None:
            if pod.gang in seen_gangs:
                continue
            seen_gangs.add(pod.gang)
            group = [p for p in pending if p.gang == pod.gang]
            bound_any |= _bind_gang(group, pods, hardware, use, templates)
            continue
        requests, why = claim_requests(pod, templates)
        if why:
            pod.reason = why
            continue
        ok, reasons = _place(pod, requests, hardware, use, set())
        if ok:
            bound_any = True
        else:
            pod.reason = _message(len(hardware.nodes), reasons)
    return bound_any


def _bind_gang(group: list[Pod], pods: Sequence[Pod], hardware: Hardware,
               use: dict[str, NodeUse], templates: Mapping[tuple[str, str], Mapping[str, Any]]) -> bool:
    gang = group[0].gang
    # Members already bound (a gang is bound whole, but a node can vanish under one) keep their nodes.
    avoid = {p.node for p in pods if p.gang == gang and p.bound and p.node}
    placed: list[Pod] = []
    failure = ""
    for pod in group:
        requests, why = claim_requests(pod, templates)
        if why:
            failure = f"pod {pod.name}: {why}"
            break
        ok, reasons = _place(pod, requests, hardware, use, avoid)
        if not ok:
            failure = f"pod {pod.name}: {_message(len(hardware.nodes), reasons)}"
            break
        avoid.add(pod.node)  # type: ignore[arg-type]
        placed.append(pod)
    if not failure:
        return True
    for pod in placed:
        _give(pod, use[pod.node])  # type: ignore[index]
    for pod in group:
        pod.reason = f"gang of {len(group)} binds all or none: {failure}"
    return False
