"""DRA device selectors: every CEL example in the seeds against realistic devices.

Each row's want is what Kubernetes' DRA scheduler gives: MATCH, NO (false) or
ERROR (a runtime error: no match, reason kept).
"""
from dataclasses import dataclass, field

import pytest
from modelplane import cel
from modelplane.quantity import Quantity
from modelplane.semver import Version

MATCH, NO, ERROR = "match", "no", "error"


def _gpu(name: str, arch: str, cc: str, memory: str, driver: str = "gpu.nvidia.com", **extra: dict) -> dict:
    return {
        "name": name,
        "driver": driver,
        "count": 8,
        "claim": "DRA",
        "deviceClassName": driver,
        "attributes": {"architecture": {"string": arch}, "cudaComputeCapability": {"version": cc}, **extra},
        "capacity": {"memory": {"value": memory}},
    }


DEVICES = {
    "L4": _gpu("gpu", "Ada", "8.9.0", "24Gi", productName={"string": "NVIDIA L4"}),
    "A100": _gpu("gpu", "Ampere", "8.0.0", "80Gi"),
    "H100": _gpu("gpu", "Hopper", "9.0.0", "80Gi", **{"topology.example.com/nvlinkDomain": {"int": 3}}),
    "H200": _gpu("gpu", "Hopper", "9.0.0", "141Gi"),
    "MI300X": {
        "name": "gpu",
        "driver": "gpu.amd.com",
        "count": 8,
        "claim": "DRA",
        "deviceClassName": "gpu.amd.com",
        "attributes": {"architecture": {"string": "CDNA3"}, "productName": {"string": "MI300X"}},
        "capacity": {"memory": {"value": "192Gi"}},
    },
    "IB": {
        "name": "nic",
        "driver": "nic.nvidia.com",
        "count": 1,
        "claim": "Synthetic",
        "attributes": {"nic.nvidia.com/linkType": {"string": "infiniband"}, "speedGbps": {"int": 400}},
    },
}

MEM = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("{}")) >= 0'
SELECTORS = {
    "memory >= 20Gi": MEM.format("20Gi"),
    "memory >= 40Gi": MEM.format("40Gi"),
    "memory >= 120Gi": MEM.format("120Gi"),
    "memory >= 80Gi": MEM.format("80Gi"),
    "Hopper": 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"',
    "cc > 8.9.0": 'device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.9.0"))',
    "nvidia driver": 'device.driver == "gpu.nvidia.com"',
    "publishes nvidia domain": '"gpu.nvidia.com" in device.attributes',
    "Hopper and 80Gi": 'device.attributes["gpu.nvidia.com"].architecture == "Hopper" &&\n'
    '  device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0\n',
    "infiniband": 'device.attributes["nic.nvidia.com"].linkType == "infiniband"',
}

# selector -> device -> want; worked out by hand from DRA semantics (a domain the
# device does not publish is an empty map, so reading a field of it is an error).
WANT = {
    "memory >= 20Gi": {"L4": MATCH, "A100": MATCH, "H100": MATCH, "H200": MATCH, "MI300X": ERROR, "IB": ERROR},
    "memory >= 40Gi": {"L4": NO, "A100": MATCH, "H100": MATCH, "H200": MATCH, "MI300X": ERROR, "IB": ERROR},
    "memory >= 120Gi": {"L4": NO, "A100": NO, "H100": NO, "H200": MATCH, "MI300X": ERROR, "IB": ERROR},
    "memory >= 80Gi": {"L4": NO, "A100": MATCH, "H100": MATCH, "H200": MATCH, "MI300X": ERROR, "IB": ERROR},
    "Hopper": {"L4": NO, "A100": NO, "H100": MATCH, "H200": MATCH, "MI300X": ERROR, "IB": ERROR},
    # 8.9.0 is not greater than 8.9.0.
    "cc > 8.9.0": {"L4": NO, "A100": NO, "H100": MATCH, "H200": MATCH, "MI300X": ERROR, "IB": ERROR},
    "nvidia driver": {"L4": MATCH, "A100": MATCH, "H100": MATCH, "H200": MATCH, "MI300X": NO, "IB": NO},
    "publishes nvidia domain": {"L4": MATCH, "A100": MATCH, "H100": MATCH, "H200": MATCH, "MI300X": NO, "IB": NO},
    # false && error is false (CEL's commutative short circuit); error && error is an error.
    "Hopper and 80Gi": {"L4": NO, "A100": NO, "H100": MATCH, "H200": MATCH, "MI300X": ERROR, "IB": ERROR},
    "infiniband": {"L4": ERROR, "A100": ERROR, "H100": ERROR, "H200": ERROR, "MI300X": ERROR, "IB": MATCH},
}


@dataclass(frozen=True)
class Case:
    name: str
    expr: str
    device: str
    want: str


CASES = [
    Case(f"{sel} on {dev}", SELECTORS[sel], dev, want) for sel, row in WANT.items() for dev, want in row.items()
]


def _outcome(r: cel.MatchResult) -> str:
    if r.error is not None:
        assert r.matched is False
        return ERROR
    return MATCH if r.matched else NO


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_seed_selectors(case: Case) -> None:
    got = cel.match(case.expr, cel.Device.from_class_device(DEVICES[case.device]))
    assert _outcome(got) == case.want, f"-want {case.want}, +got {got}"


@dataclass(frozen=True)
class ReasonCase:
    name: str
    expr: str
    device: str = "H100"
    want_error: str = ""
    want_match: bool = False


REASONS = [
    ReasonCase("unknown attribute in a known domain", 'device.attributes["gpu.nvidia.com"].foo == "x"',
               want_error="'foo'"),
    ReasonCase("unknown capacity in a known domain", 'device.capacity["gpu.nvidia.com"].bandwidth.sign() == 1',
               want_error="'bandwidth'"),
    ReasonCase("non-bool result", 'device.capacity["gpu.nvidia.com"].memory', want_error="returned quantity, want bool"),
    ReasonCase("int result", "1 + 1", want_error="returned int, want bool"),
    ReasonCase("syntax error", "device.driver ==", want_error="syntax error"),
    ReasonCase("undeclared variable", 'node.driver == "x"', want_error="undeclared reference to 'node'"),
    ReasonCase("heterogeneous equality is an error", 'device.attributes["gpu.nvidia.com"].architecture == 9',
               want_error="no such overload: string == int"),
    ReasonCase("bad quantity literal", 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("lots")) > 0',
               want_error="invalid quantity 'lots'"),
    ReasonCase("quantity vs version", 'device.capacity["gpu.nvidia.com"].memory.compareTo(semver("1.0.0")) > 0',
               want_error="no such overload"),
    ReasonCase("has() on an unknown attribute is false", 'has(device.attributes["gpu.nvidia.com"].foo)'),
    ReasonCase("has() in an unpublished domain is false", 'has(device.attributes["x.example.com"].foo)'),
    ReasonCase("an unpublished domain is an empty map", 'size(device.attributes["x.example.com"]) == 0',
               want_match=True),
    ReasonCase("qualified name lands in its own domain",
               'device.attributes["topology.example.com"].nvlinkDomain == 3', want_match=True),
    ReasonCase("qualified name is not in the driver domain",
               'has(device.attributes["gpu.nvidia.com"].nvlinkDomain)'),
    ReasonCase("unqualified name lands in the driver domain",
               'device.attributes["nic.nvidia.com"].speedGbps == 400', device="IB", want_match=True),
    ReasonCase("int attribute", 'device.attributes["nic.nvidia.com"].speedGbps >= 200', device="IB", want_match=True),
    ReasonCase("version accessors", 'device.attributes["gpu.nvidia.com"].cudaComputeCapability.major() == 9',
               want_match=True),
    ReasonCase("quantity helpers", 'device.capacity["gpu.nvidia.com"].memory.sub(quantity("16Gi"))'
               '.compareTo(quantity("64Gi")) == 0 && device.capacity["gpu.nvidia.com"].memory.isInteger()',
               want_match=True),
    ReasonCase("quantity equality is by value", 'device.capacity["gpu.nvidia.com"].memory == quantity("81920Mi")',
               want_match=True),
    ReasonCase("isSemver and isQuantity", 'isSemver("9.0.0") && !isSemver("v9") && isQuantity("1Gi") && '
               '!isQuantity("1 Gi")', want_match=True),
    ReasonCase("string extensions are not DRA", 'device.driver.lowerAscii() == "gpu.nvidia.com"',
               want_error="lowerAscii"),
]


@pytest.mark.parametrize("case", REASONS, ids=lambda c: c.name)
def test_match_reasons(case: ReasonCase) -> None:
    got = cel.match(case.expr, cel.Device.from_class_device(DEVICES[case.device]))
    assert got.matched is case.want_match, got
    if case.want_error:
        assert got.error is not None and case.want_error in got.error, f"-want {case.want_error!r}, +got {got.error!r}"
    else:
        assert got.error is None


def test_device_from_class_device_types_values() -> None:
    d = cel.Device.from_class_device(DEVICES["H100"])
    assert d.driver == "gpu.nvidia.com"
    assert d.attributes["cudaComputeCapability"] == Version.parse("9.0.0")
    assert d.capacity["memory"] == Quantity("80Gi")
    assert cel.Device.from_class_device(DEVICES["H100"]) == d


BAD_DEVICES = [
    ("no driver", {"name": "gpu"}, "driver"),
    ("two attribute kinds", {"name": "g", "driver": "d", "attributes": {"a": {"string": "x", "int": 1}}}, "exactly one"),
    ("no attribute kind", {"name": "g", "driver": "d", "attributes": {"a": {}}}, "exactly one"),
    ("int is a string", {"name": "g", "driver": "d", "attributes": {"a": {"int": "1"}}}, "'a'"),
    ("bad version", {"name": "g", "driver": "d", "attributes": {"cc": {"version": "v9"}}}, "'cc'"),
    ("bad capacity", {"name": "g", "driver": "d", "capacity": {"memory": {"value": "lots"}}}, "'memory'"),
    ("capacity without value", {"name": "g", "driver": "d", "capacity": {"memory": "80Gi"}}, "value"),
]


@pytest.mark.parametrize("name,d,want", BAD_DEVICES, ids=[b[0] for b in BAD_DEVICES])
def test_bad_device_is_a_clear_error(name: str, d: dict, want: str) -> None:
    with pytest.raises(cel.DeviceError) as err:
        cel.Device.from_class_device(d)
    assert want in str(err.value)


@dataclass
class Counter:
    before: dict = field(default_factory=cel.stats)

    def delta(self, name: str) -> int:
        return cel.stats()[name] - self.before[name]


def test_match_is_memoized_by_device_content_not_name() -> None:
    expr = SELECTORS["Hopper"] + " && true"
    a = cel.Device.from_class_device(DEVICES["H100"])
    b = cel.Device.from_class_device({**DEVICES["H100"], "name": "other-name"})
    c = Counter()
    results = [cel.match(expr, dev) for dev in (a, b, a, b)]
    assert all(r == cel.MatchResult(True) for r in results)
    assert c.delta("evaluations") == 1
    assert c.delta("memo_hits") == 3
    assert c.delta("compiles") == 1


def test_different_content_is_evaluated_again() -> None:
    expr = SELECTORS["Hopper"] + " || false"
    c = Counter()
    assert cel.match(expr, cel.Device.from_class_device(DEVICES["H100"])).matched
    assert not cel.match(expr, cel.Device.from_class_device(DEVICES["A100"])).matched
    assert c.delta("evaluations") == 2


def test_reset_stats() -> None:
    cel.match('device.driver == "x"', cel.Device("d", "x"))
    cel.reset_stats()
    assert cel.stats() == {"compiles": 0, "evaluations": 0, "memo_hits": 0}


EXPENSIVE = "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1].all(x, [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1].all(y, x == y))"


def test_a_selector_over_budget_is_rejected_for_every_device_without_evaluating_again() -> None:
    expr = EXPENSIVE + " && device.driver != 'poison-1'"
    c = Counter()
    first = cel.match(expr, cel.Device("gpu", "a"))
    assert not first.matched and "selector too expensive: evaluation exceeded" in first.error
    assert cel.match(expr, cel.Device("gpu", "b")) == first
    assert cel.match(expr, cel.Device("nic", "c")) == first
    assert c.delta("evaluations") == 1


def test_poison_overrides_a_device_that_matched_earlier() -> None:
    # Whether a device matches must not depend on which device was asked about first.
    expr = f"device.driver == 'cheap' ? true : {EXPENSIVE}"
    cheap = cel.Device("gpu", "cheap")
    assert cel.match(expr, cheap) == cel.MatchResult(True)
    assert not cel.match(expr, cel.Device("gpu", "dear")).matched
    got = cel.match(expr, cheap)
    assert not got.matched and "too expensive" in got.error


def test_a_cpu_deadline_rejection_is_not_remembered(monkeypatch) -> None:
    # The deadline can fire for reasons outside the selector (a garbage collection): try again next time.
    from dataclasses import replace

    from modelplane.cel import guards

    expr = "[1, 2, 3].all(x, x > 0) && [4, 5, 6].all(x, x > 0) && device.driver == 'deadline'"
    device = cel.Device("gpu", "deadline")
    with monkeypatch.context() as m:
        m.setitem(guards.LIMITS, "dra", replace(guards.LIMITS["dra"], cpu_ms=0))
        got = cel.match(expr, device)
    assert not got.matched and "ms of CPU" in got.error
    assert cel.match(expr, device) == cel.MatchResult(True)
    assert cel.match(expr, cel.Device("gpu", "other")) == cel.MatchResult(False)
