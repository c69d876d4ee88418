"""Builders and a fake device matcher for the scheduler tests.

Rows in the scheduler tables show only what matters; everything else comes
from these defaults. The fake matcher understands selectors of the form
``<attr> <op> <value>`` over a ``FakeDevice`` (``mem >= 40``,
``arch == Hopper``, ``driver == gpu.amd.com``); the word ``boom`` is a
runtime error. It counts its calls so tests can assert how often CEL would
run. One test file (test_scheduler_cel.py) runs the same scheduler with the
real CEL matcher.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from modelplane.scheduler import (
    DRA,
    LEADER,
    STANDALONE,
    SYNTHETIC,
    WORKER,
    Allocation,
    ClassDevice,
    Cluster,
    Current,
    Deployment,
    DeviceRequest,
    Engine,
    Fleet,
    InferenceClass,
    Member,
    PodGroup,
    Pool,
    Taint,
)

_OPS = {"==": operator.eq, "!=": operator.ne, ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}


@dataclass(frozen=True)
class FakeDevice:
    driver: str = "gpu.nvidia.com"
    mem: int = 80
    arch: str = "Ampere"


@dataclass(frozen=True)
class FakeResult:
    matched: bool
    error: str | None = None


@dataclass
class FakeMatcher:
    calls: list[tuple[str, FakeDevice]] = field(default_factory=list)

    def __call__(self, expr: str, device: FakeDevice) -> FakeResult:
        self.calls.append((expr, device))
        if expr == "boom":
            return FakeResult(False, "no such key: boom")
        attr, op, value = expr.split(" ", 2)
        have = getattr(device, attr)
        want = int(value) if isinstance(have, int) else value
        return FakeResult(_OPS[op](have, want))


def _dev(name="gpu", count=8, mem=80, arch="Ampere", driver="gpu.nvidia.com", claim=DRA) -> ClassDevice:
    return ClassDevice(
        name=name,
        device=FakeDevice(driver=driver, mem=mem, arch=arch),
        count=count,
        claim=claim,
        device_class_name=driver if claim == DRA else None,
    )


def _nic(count=1) -> ClassDevice:
    return _dev("nic", count=count, mem=0, arch="infiniband", driver="nic.nvidia.com", claim=SYNTHETIC)


def _class(name, *devices: ClassDevice) -> InferenceClass:
    return InferenceClass(name, tuple(devices) or (_dev(),))


# A small catalogue: gpus per node and memory in Gi.
CLASSES = {
    "l4": _class("l4", _dev(count=1, mem=24, arch="Ada")),
    "l40s": _class("l40s", _dev(count=4, mem=48, arch="Ada")),
    "a100": _class("a100", _dev(count=8, mem=80, arch="Ampere")),
    "h100": _class("h100", _dev(count=8, mem=80, arch="Hopper"), _nic()),
    "h200": _class("h200", _dev(count=8, mem=141, arch="Hopper")),
    "mi300x": _class("mi300x", _dev(count=8, mem=192, arch="CDNA3", driver="gpu.amd.com")),
}


def _alloc(replica="other/r-0", order="2020-01-01T00:00:00Z/other/r/00000", deployment="other/r", pods=1, gpus=8,
           gang=False, devices=None) -> Allocation:
    devs = {"gpu": gpus} if devices is None else devices
    return Allocation(replica, deployment, order, (PodGroup(pods, devs, gang),))


def _pool(name="a100", cls=None, nodes=2, allocations=()) -> Pool:
    return Pool(name, cls or name, nodes, tuple(allocations))


def _cluster(name="a", pools=None, labels=None, ready=True, reason="", taints=()) -> Cluster:
    return Cluster(
        name=name,
        labels=labels or {},
        ready=ready,
        not_ready_reason=reason,
        taints=tuple(Taint(*t) if isinstance(t, tuple) else t for t in taints),
        pools=(_pool(),) if pools is None else (None if pools == "unknown" else tuple(pools)),
    )


def _request(count=1, *selectors, name="gpu") -> DeviceRequest:
    return DeviceRequest(name, count, tuple(selectors))


def _standalone(count=1, *selectors, devices=None) -> Member:
    return Member(STANDALONE, 1, tuple(devices) if devices is not None else (_request(count, *selectors),))


def _engine(name="e", copies=1, members=None, phase=None) -> Engine:
    return Engine(name, copies, phase, tuple(members) if members is not None else (_standalone(),))


def _gang_engine(name="e", workers=1, count=8, copies=1, *selectors) -> Engine:
    return Engine(
        name,
        copies,
        None,
        (Member(LEADER, 1, (_request(count, *selectors),)), Member(WORKER, workers, (_request(count, *selectors),))),
    )


def _deployment(replicas=1, engines=None, selector=None, tolerations=(), cache=None, name="d",
                created="2025-01-01T00:00:00Z", mode="Unified") -> Deployment:
    return Deployment(
        namespace="ml",
        name=name,
        created=created,
        replicas=replicas,
        cluster_selector=selector or {},
        tolerations=tuple(tolerations),
        serving_mode=mode,
        cache=cache,
        engines=tuple(engines) if engines is not None else (_engine(),),
    )


def _fleet(*clusters, classes=None, cache_ready=None, known=True) -> Fleet:
    return Fleet(tuple(clusters), CLASSES if classes is None else classes, cache_ready, known)


def _current(index, cluster, *pools, order=None, d=None) -> Current:
    d = d or _deployment()
    return Current(index, cluster, tuple(pools) or ("a100",), order or d.order(index))


def where(schedule) -> dict[int, str]:
    """index -> cluster, the part most rows assert."""
    return {p.index: p.cluster for p in schedule.placements}


def pools_of(schedule, index) -> tuple[str, ...]:
    return next(tuple(m.pool for m in p.members) for p in schedule.placements if p.index == index)
