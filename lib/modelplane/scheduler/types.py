"""The scheduler's vocabulary: what goes in, what comes out.

Everything here is a frozen dataclass built from plain values, so a schedule
is a pure function of its inputs and a test can write any fleet in a few
lines. compose-model-deployment builds these from the XRs it reads; nothing
in the scheduler knows about protobuf, the SDK or pydantic.

Inputs: a ``Deployment`` (the ML team's shape), a ``Fleet`` (clusters with
their pools and allocations, the InferenceClasses those pools name, the
deployment's cache readiness) and the deployment's ``Current`` replicas (as
observed from its ModelReplicas).

Output: a ``Schedule`` of ``Placement`` (one per placed replica) and
``Unplaced`` (one per replica with nowhere to go, with a reason per cluster).

Class devices are opaque to the scheduler: ``ClassDevice.device`` is whatever
the device matcher understands (``modelplane.cel`` builds one from an
InferenceClass ``spec.devices[]`` item); the scheduler only hands it back to
the matcher together with a selector.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Member roles and serving modes, as spelled in the API.
STANDALONE = "Standalone"
LEADER = "Leader"
WORKER = "Worker"
UNIFIED = "Unified"
PREFILL_DECODE = "PrefillDecode"

# Class device claims: DRA devices are bound to pods and consume node
# capacity; Synthetic devices only describe the node (an InfiniBand NIC) and
# are never consumed.
DRA = "DRA"
SYNTHETIC = "Synthetic"

# Taint effects (Kubernetes semantics).
NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"


# --- the deployment ---------------------------------------------------------


@dataclass(frozen=True)
class DeviceRequest:
    """One ``nodeSelector.devices[]`` entry: ``count`` devices per pod, each
    satisfying every CEL selector."""

    name: str
    count: int = 1
    selectors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Member:
    """One engine member. ``pods`` is 1 for a Standalone or Leader and
    ``worker.nodes`` for a Worker."""

    role: str = STANDALONE
    pods: int = 1
    devices: tuple[DeviceRequest, ...] = ()


@dataclass(frozen=True)
class Engine:
    name: str
    copies: int = 1
    phase: str | None = None
    members: tuple[Member, ...] = ()

    @property
    def gang(self) -> bool:
        """A Leader with Workers: every pod of one copy on its own node."""
        return any(m.role in (LEADER, WORKER) for m in self.members)


@dataclass(frozen=True)
class Toleration:
    """Kubernetes toleration: ``Exists`` with an empty key tolerates every
    taint; an empty effect matches every effect."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""


@dataclass(frozen=True)
class Deployment:
    namespace: str
    name: str
    created: str  # creationTimestamp; the admission key starts with it
    replicas: int = 1
    cluster_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    serving_mode: str = UNIFIED
    cache: str | None = None
    engines: tuple[Engine, ...] = ()

    @property
    def key(self) -> str:
        """``namespace/name``, as allocations spell their deployment."""
        return f"{self.namespace}/{self.name}"

    def order(self, index: int) -> str:
        """The admission key of replica ``index``; sorts oldest first."""
        return f"{self.created}/{self.namespace}/{self.name}/{index:05d}"

    def members(self) -> tuple[tuple[Engine, Member], ...]:
        """Every member in engine then member order: the order ``Current.pools``
        and ``Placement.members`` use."""
        return tuple((e, m) for e in self.engines for m in e.members)


# --- the fleet --------------------------------------------------------------


@dataclass(frozen=True)
class ClassDevice:
    """One InferenceClass ``spec.devices[]`` entry; ``count`` is per node."""

    name: str
    device: Any  # the matcher's device (modelplane.cel Device); opaque here
    count: int = 1
    claim: str = DRA
    device_class_name: str | None = None


@dataclass(frozen=True)
class InferenceClass:
    name: str
    devices: tuple[ClassDevice, ...] = ()


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = NO_SCHEDULE

    def __str__(self) -> str:
        return f"{self.key}={self.value}" if self.value else self.key


@dataclass(frozen=True, slots=True)
class PodGroup:
    """Identical pods placed in one pool; ``devices`` maps a class device name
    to the count each pod consumes. A gang group puts each pod on its own
    node."""

    count: int
    devices: Mapping[str, int] = field(default_factory=dict)
    gang: bool = False


@dataclass(frozen=True, slots=True)
class Allocation:
    """A replica's consumption of one pool (InferenceCluster
    ``status.pools[].allocations[]``)."""

    replica: str  # namespace/name of the ModelReplica
    deployment: str  # namespace/name of its ModelDeployment
    order: str
    pods: tuple[PodGroup, ...] = ()


@dataclass(frozen=True, slots=True)
class Pool:
    name: str
    class_name: str
    nodes: int
    # A tuple, or any sequence read on first use (compose-model-deployment
    # reads them from the request only for pools the scheduler replays).
    allocations: Sequence[Allocation] = ()


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Cluster:
    """An InferenceCluster. ``pools`` is None while the cluster has not
    published its status yet: replicas already there are held, new ones go
    elsewhere."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    ready: bool = True
    not_ready_reason: str = ""
    taints: tuple[Taint, ...] = ()
    pools: tuple[Pool, ...] | None = ()


@dataclass(frozen=True)
class Fleet:
    """What the deployment can see.

    ``clusters_known`` is False while the InferenceClusters have not been
    fetched: every current replica is then held where it is and nothing new
    is placed. ``cache_ready`` maps a cluster name to whether the
    deployment's cache is Ready there; None means not fetched yet (only
    consulted when the deployment has a cache). ``terminating`` holds the
    indexes of this deployment's ModelReplicas that are gone from its
    observed children but still being deleted: a new replica never takes
    one, so a name is never reused while its previous holder terminates
    (asked only when new indexes are needed, so it may be lazy).
    """

    clusters: tuple[Cluster, ...] = ()
    classes: Mapping[str, InferenceClass] = field(default_factory=dict)
    cache_ready: Mapping[str, bool] | None = None
    clusters_known: bool = True
    terminating: Container[int] = frozenset()


@dataclass(frozen=True)
class Current:
    """A replica of this deployment as observed: its cluster, the pool of
    each member (in ``Deployment.members()`` order) and its admission key.

    ``extra`` marks a replica that exists but is not one of
    ``Deployment.replicas``: of an outdated revision, draining, or replaced
    because its cluster failed. An extra is never moved, counted or scaled
    down; it is judged (held, stays, or evicted when it lost its place) and
    while it stays its observed ``pods`` (``spec.placement``) take capacity
    at its own admission key. ``replaced`` is when the cluster of a replica
    that was replaced by failover went down (RFC 3339; empty otherwise):
    scale-down removes such replicas first, the oldest outage first.
    """

    index: int
    cluster: str
    pools: tuple[str, ...] = ()
    order: str = ""
    pods: tuple[PoolPlacement, ...] = ()
    extra: bool = False
    replaced: str = ""


# --- the result -------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedDevice:
    """A device request resolved against the pool's class."""

    request: DeviceRequest
    class_device: str
    count: int
    claim: str
    device_class_name: str | None = None


@dataclass(frozen=True)
class MemberPlacement:
    engine: str
    role: str
    pool: str
    devices: tuple[ResolvedDevice, ...] = ()


@dataclass(frozen=True)
class PoolPlacement:
    """One ``spec.placement[]`` entry: what the replica consumes in a pool."""

    pool: str
    pods: tuple[PodGroup, ...] = ()


# Why a placement is what it is.
NEW = "New"  # a missing index placed for the first time
KEPT = "Kept"  # a current replica that still fits where it is
MOVED = "Moved"  # a current replica that had to leave its cluster
# Kept untouched: its cluster or class is not observed yet, its cluster is not Ready, or its pool's
# class no longer satisfies its selectors (it keeps its devices, as DRA keeps an allocated claim).
HELD = "Held"


@dataclass(frozen=True)
class Placement:
    index: int
    cluster: str
    order: str
    members: tuple[MemberPlacement, ...] = ()
    pods: tuple[PoolPlacement, ...] = ()
    state: str = NEW
    moved_from: str | None = None  # with MOVED: the cluster it left, and why
    moved_because: str | None = None
    held_because: str | None = None  # with HELD: "not observed yet", "not Ready", or the selector (explain.mismatch)


@dataclass(frozen=True)
class Unplaced:
    index: int
    reasons: Mapping[str, str]  # cluster name -> one short reason
    message: str  # the aggregated one-liner, "0/3 clusters fit: ..."
    capacity: bool = False  # some cluster passed every filter but had no room


@dataclass(frozen=True)
class Eviction:
    """An observed replica that must go: it lost its place (``evicted``) or
    is one too many (``removed`` by a scale-down). ``reason`` is one short
    phrase ("NoExecute taint maintenance", "scaled down to 2")."""

    index: int
    cluster: str
    reason: str


@dataclass(frozen=True)
class Schedule:
    """``placements``: the replicas that count, by index. ``extras``: the
    extra replicas that stay (KEPT or HELD; members are not resolved).
    ``evicted``: observed replicas, extras included, that lost their place;
    ``removed``: replicas a scale-down let go."""

    placements: tuple[Placement, ...] = ()
    unplaced: tuple[Unplaced, ...] = ()
    message: str = ""
    extras: tuple[Placement, ...] = ()
    evicted: tuple[Eviction, ...] = ()
    removed: tuple[Eviction, ...] = ()
