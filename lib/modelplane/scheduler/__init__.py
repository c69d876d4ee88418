"""The fleet scheduler: where each replica of a ModelDeployment runs.

The model
---------
A replica is one complete serving instance (every engine, every copy) on
one InferenceCluster; a PrefillDecode pair therefore never spans clusters,
though each member may use a different pool. Indexes are identities
(``keep.py``): replica 3 keeps its name and its admission key
``{created}/{namespace}/{name}/{00003}`` for life.

Capacity is devices per node (``capacity.py``). A pool is N identical nodes
of its InferenceClass; a pod takes ``count`` of each DRA device it requests
from one node, so an 8-GPU node holds eight 1-GPU pods; each pod of a gang
(the Leader and Workers of one engine copy) takes its own node; copies
multiply demand; Synthetic devices (an InfiniBand NIC) must be present but
are never consumed. Node fill is not reported, so it is rebuilt from the
pools' allocations, replayed oldest admission first with first fit.

Inputs and outputs are frozen dataclasses (``types.py``).
``schedule(deployment, fleet, current)`` (``core.py``) is pure and runs in
phases, one call each, like the Kubernetes scheduler framework and Karmada:

1. match (``matching.py``): per deployment, once per class: which classes
   satisfy each member, evaluating each CEL selector once per class device
   through one seam, the ``matcher`` (``modelplane.cel`` by default).
2. keep (``keep.py``, ``keep()`` returning ``Kept``): placed replicas stay
   unless they lost their place (evicted: their cluster is gone, drains
   them with an untolerated NoExecute taint, their pool is gone or its
   class has fewer devices per node than their pods take, or they are
   overcommitted by replicas admitted earlier, as ``plan.replay``
   reports); scale-down picks who goes; replicas that cannot be judged now
   (cluster or class not observed, cluster not Ready) are held untouched,
   and so are those whose pool's class no longer satisfies their selectors
   (still counted in the fill, like an allocated DRA claim).
   Extra replicas (outdated revision, draining, replaced by failover) are
   judged alike and take capacity while they stay, but never count towards
   ``replicas``. ``Kept.wanted`` lists the indexes to place: new ones and
   those of replicas that must move.
3. filter (``filters.py``): once per cluster, each filter naming one
   countable reason: ready, clusterSelector, taints, cache Ready, device
   match; free capacity is checked by planning the replica (``plan.py``).
4. score (``scores.py``, ``Ranking``): untolerated PreferNoSchedule taints,
   then spread (fewest of this deployment's replicas), then pack (least
   free capacity left), each normalised 0-100, compared in that order.
5. bind (``core.py``): each wanted index goes to the best score, ties by
   cluster name; the chosen cluster's fill is updated and only it is
   re-planned and re-scored for the next replica. New replicas are
   admitted after every existing allocation.
6. result (``core.py``): the ``Schedule``. Every replica left unplaced
   carries one reason per cluster and a one-line summary in the Kubernetes
   FitError style (``explain.py``); ``render.py`` writes ``spec.placement``
   dicts.

Cost: a placing call walks every cluster, so the common case costs a few
dict look-ups per cluster. What does not depend on the deployment is read
once per ``Cluster`` object (``signature.py``: pools interned, other
deployments' allocations in admission order); each distinct pool is
replayed once per call and shared, read-only, by the clusters that have it
until one is bound to (``plan.quick_state``); the filters are checked in one
pass when a cluster passes them all (``filters.quick_pass``). Each shortcut
gives way to the plain phases where it does not apply, with the same
result (tests/scheduler/test_signature.py).
"""

from .capacity import PoolFill
from .core import schedule
from .explain import fit_error
from .matching import DeviceMatcher, Matches, MemberFit, Misfit, default_matcher
from .render import device_dicts, member_dicts, placement_dicts
from .scores import normalize
from .types import (
    DRA,
    HELD,
    KEPT,
    LEADER,
    MOVED,
    NEW,
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    PREFILL_DECODE,
    STANDALONE,
    SYNTHETIC,
    UNIFIED,
    WORKER,
    Allocation,
    ClassDevice,
    Cluster,
    Current,
    Deployment,
    DeviceRequest,
    Engine,
    Eviction,
    Fleet,
    InferenceClass,
    Member,
    MemberPlacement,
    Placement,
    PodGroup,
    Pool,
    PoolPlacement,
    ResolvedDevice,
    Schedule,
    Taint,
    Toleration,
    Unplaced,
)

__all__ = [
    "DRA", "HELD", "KEPT", "LEADER", "MOVED", "NEW", "NO_EXECUTE", "NO_SCHEDULE", "PREFER_NO_SCHEDULE",
    "PREFILL_DECODE", "STANDALONE", "SYNTHETIC", "UNIFIED", "WORKER",
    "Allocation", "ClassDevice", "Cluster", "Current", "Deployment", "DeviceMatcher", "DeviceRequest", "Engine", "Eviction",
    "Fleet", "InferenceClass", "Matches", "Member", "MemberFit", "MemberPlacement", "Misfit", "Placement",
    "PodGroup", "Pool", "PoolFill", "PoolPlacement", "ResolvedDevice", "Schedule", "Taint", "Toleration",
    "Unplaced", "default_matcher", "device_dicts", "fit_error", "member_dicts", "normalize", "placement_dicts",
    "schedule",
]
