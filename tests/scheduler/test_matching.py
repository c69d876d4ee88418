"""Device matching: resolution rules, the CEL budget, and the real CEL seam."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.cel import Device
from modelplane.scheduler import (
    ClassDevice,
    InferenceClass,
    Matches,
    MemberFit,
    Misfit,
    schedule,
)

from tests.scheduler.builders import (
    CLASSES,
    FakeMatcher,
    _class,
    _cluster,
    _deployment,
    _dev,
    _engine,
    _fleet,
    _nic,
    _pool,
    _request,
    _standalone,
    where,
)


@dataclass(frozen=True)
class Case:
    name: str
    requests: tuple
    klass: InferenceClass
    want: object  # demand tuple for a fit, or Misfit


CASES = [
    Case("one request, one device", (_request(2, "mem >= 40"),), CLASSES["a100"], (("gpu", 2),)),
    Case("every selector must hold", (_request(1, "mem >= 40", "arch == Hopper"),), CLASSES["a100"],
         Misfit("gpu", "device gpu: selector 2 false", "arch == Hopper")),
    Case("two requests share a device within its count", (_request(4), _request(4, name="more")), CLASSES["a100"],
         (("gpu", 8),)),
    Case("two requests beyond the device count", (_request(4), _request(5, name="more")), CLASSES["a100"],
         Misfit("more", "device gpu: count 5 > 4 per node")),
    Case("synthetic device present, not consumed", (_request(8), _request(1, "driver == nic.nvidia.com", name="nic")),
         CLASSES["h100"], (("gpu", 8),)),
    Case("synthetic device absent", (_request(1, "driver == nic.nvidia.com", name="nic"),), CLASSES["a100"],
         Misfit("nic", "device gpu: selector 1 false", "driver == nic.nvidia.com")),
    Case("synthetic count still bounds the request", (_request(2, "driver == nic.nvidia.com", name="nic"),), CLASSES["h100"],
         Misfit("nic", "device nic: count 2 > 1 per node")),
    Case("a request is resolved to the first device that takes it",
         (_request(1, "mem >= 40"),), _class("two", _dev("small", count=1, mem=24), _dev("big", count=2, mem=80)),
         (("big", 1),)),
    Case("no requests fit anything", (), CLASSES["l4"], ()),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_member_fit(case: Case) -> None:
    d = _deployment(engines=[_engine(members=[_standalone(devices=case.requests)])])
    got = Matches(d, {case.klass.name: case.klass}, FakeMatcher()).fit(case.klass.name, 0)
    assert (got.demand if isinstance(got, MemberFit) else got) == case.want


def test_unknown_class_is_none() -> None:
    assert Matches(_deployment(), {}, FakeMatcher()).fit("nope", 0) is None


def test_each_selector_runs_once_per_class_device_not_per_cluster() -> None:
    matcher = FakeMatcher()
    d = _deployment(3, engines=[_engine(members=[_standalone(1, "mem >= 40", "arch == Ampere")])])
    clusters = [_cluster(f"c{i:03d}", pools=[_pool("a100"), _pool("l4"), _pool("h100")]) for i in range(200)]
    got = schedule(d, _fleet(*clusters), matcher=matcher)
    assert len(got.placements) == 3
    # a100: 2 selectors; l4: first selector false (short-circuit); h100: gpu 2 (2nd false) + nic 1 (1st false).
    assert sorted(set(matcher.calls), key=str) == sorted(matcher.calls, key=str)
    assert len(matcher.calls) == 2 + 1 + 2 + 1


def test_one_match_table_serves_later_calls() -> None:
    matcher = FakeMatcher()
    d = _deployment(engines=[_engine(members=[_standalone(1, "mem >= 40")])])
    fleet = _fleet(_cluster("a"))
    table = Matches(d, fleet.classes, matcher)
    schedule(d, fleet, matches=table)
    schedule(d, fleet, matches=table)
    assert len(matcher.calls) == 1


# --- the real CEL matcher through the same seam -------------------------------------------

_H100 = {
    "name": "gpu",
    "driver": "gpu.nvidia.com",
    "attributes": {"architecture": {"string": "Hopper"}, "cudaComputeCapability": {"version": "9.0.0"}},
    "capacity": {"memory": {"value": "80Gi"}},
}
_L4 = {
    "name": "gpu",
    "driver": "gpu.nvidia.com",
    "attributes": {"architecture": {"string": "Ada"}, "cudaComputeCapability": {"version": "8.9.0"}},
    "capacity": {"memory": {"value": "24Gi"}},
}
_IB = {"name": "nic", "driver": "nic.nvidia.com", "attributes": {"linkType": {"string": "infiniband"}}}


def _real(name: str, *devs: tuple[dict, int, str]) -> InferenceClass:
    return InferenceClass(
        name,
        tuple(
            ClassDevice(d["name"], Device.from_class_device(d), count, claim, d["driver"] if claim == "DRA" else None)
            for d, count, claim in devs
        ),
    )


REAL = {
    "h100": _real("h100", (_H100, 8, "DRA"), (_IB, 1, "Synthetic")),
    "l4": _real("l4", (_L4, 1, "DRA")),
}


@dataclass(frozen=True)
class RealCase:
    name: str
    requests: tuple
    want: dict  # index -> cluster
    reason: str | None = None  # the reason for cluster "l4" when unplaced


REAL_CASES = [
    RealCase("seed: 20Gi of memory fits the L4 (tightest pool)",
             (_request(1, 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("20Gi")) >= 0'),), {0: "l4"}),
    RealCase("seed: Hopper with 80Gi goes to the H100",
             (_request(8, 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"',
                       'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0'),), {0: "h100"}),
    RealCase("seed: GPU plus an InfiniBand NIC",
             (_request(8, 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'),
              _request(1, 'device.attributes["nic.nvidia.com"].linkType == "infiniband"', name="nic")), {0: "h100"}),
    RealCase("seed: compute capability above 8.9",
             (_request(1, 'device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.9.0"))'),),
             {0: "h100"}),
    RealCase("nothing has 120Gi: the reason names the selector",
             (_request(1, 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("120Gi")) >= 0'),), {},
             'no pool has a device matching request "gpu" (l4: device gpu: selector 1 false)'),
    RealCase("an unknown attribute is an error, shown trimmed",
             (_request(1, 'device.attributes["gpu.nvidia.com"].nope == "x"'),), {}),
]


@pytest.mark.parametrize("case", REAL_CASES, ids=[c.name for c in REAL_CASES])
def test_real_cel(case: RealCase) -> None:
    d = _deployment(engines=[_engine(members=[_standalone(devices=case.requests)])])
    fleet = _fleet(_cluster("h100", pools=[_pool("h100", nodes=1)]), _cluster("l4", pools=[_pool("l4", nodes=1)]), classes=REAL)
    got = schedule(d, fleet)  # default matcher: modelplane.cel
    assert where(got) == case.want
    if not case.want:
        reason = got.unplaced[0].reasons["l4"]
        assert "\n" not in reason and len(reason) < 200
        if case.reason:
            assert reason == case.reason
        else:
            assert "selector 1 error: " in reason


def test_nic_helper_is_synthetic() -> None:
    # Guards the builders the other tables rely on.
    assert (_nic().claim, _nic().device_class_name) == ("Synthetic", None)
