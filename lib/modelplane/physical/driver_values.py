"""What GPU DRA drivers publish per product: the value table classes and selectors are checked against.

A ModelDeployment's selectors are evaluated twice: by the fleet scheduler
against an InferenceClass, and by the DRA allocator on the cluster against
the ResourceSlice the driver really published. Both agree only if the class
says what the driver publishes, so this table holds, per GPU product, the
attributes and capacity a full, unpartitioned GPU gets from its driver, and
where each value comes from.

How NVIDIA's DRA driver (k8s-dra-driver-gpu v25.12.0, driver ``gpu.nvidia.com``)
forms them, in ``cmd/gpu-kubelet-plugin/``:

- ``memory`` is NVML's total memory (``nvlib.go:441``, ``:551``) as a binary
  quantity (``deviceinfo.go:165-166``): ``143771Mi`` on an H200, not ``141Gi``;
- ``driverVersion`` is NVML's driver version (``nvlib.go:461``) through
  Masterminds semver (``partitions.go:57-58``), which drops leading zeros:
  NVML's ``580.159.04`` is published as ``580.159.4``;
- ``cudaDriverVersion`` is NVML's CUDA driver version as major.minor
  (``nvlib.go:465``, ``:557``), published as ``13.0.0`` for driver 580;
- ``productName``, ``brand``, ``architecture``, ``cudaComputeCapability`` are
  NVML's, named as go-nvlib names them (``partitions.go:45-55``;
  ``vendor/github.com/NVIDIA/go-nvlib/pkg/nvlib/device/device.go:72-148``).

Values vary: memory with ECC mode (a T4 publishes ``15109Mi`` on old drivers,
``15360Mi`` on 525 and later) and driver; MIG mode replaces the full GPU with
MIG devices whose memory is the profile's (``deviceinfo.go:241``); the
versions are the installed driver's. So selectors ask with a margin
(:data:`MARGIN`) and classes carry the pairing's versions (:data:`NVIDIA`).

Invariants: one row per (driver, productName); every row names its source and
what makes its values vary; ``measured`` is True only for values read on real
hardware (by us or in a public ResourceSlice or NVML report), never for values
inferred from a datasheet.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from typing import Any

from modelplane.quantity import Quantity

NVIDIA_DRIVER = "gpu.nvidia.com"
AMD_DRIVER = "gpu.amd.com"

# A selector asks for at most 98% of the memory the driver publishes, rounded down to a whole
# GiB: 78Gi for an H100 publishing 81559Mi. 2% covers what ECC mode and driver releases were seen
# to move (a T4: 15109Mi vs 15360Mi, 1.6%); docs/platform/gpu-classes.md states the rule.
MARGIN = Decimal("0.98")


@dataclass(frozen=True)
class Pairing:
    """The GPU driver a class's nodes run and the DRA driver release it is paired with."""

    nvml_driver: str          # as nvidia-smi prints it
    cuda: str                 # NVML's CUDA driver version, major.minor
    dra_driver: str           # the chart version Modelplane pins (platform/stack.py)
    source: str

    @property
    def driver_version(self) -> str:
        """As the DRA driver publishes it: semver without leading zeros (580.159.04 -> 580.159.4)."""
        return ".".join(str(int(p)) for p in self.nvml_driver.split("."))

    @property
    def cuda_driver_version(self) -> str:
        return f"{self.cuda}.0"


# v25.12.0's kubelet plugin calls nvmlDeviceGetAddressingMode at start (nvlib.go:481, through
# go-nvlib device.go:151-152 with no symbol check); NVML has it from 13.0 (driver 580) on
# (vendored nvml.h:1 "NVML VERSION: 13.0.39", :4721); on 570 the plugin dies with
# "undefined symbol: nvmlDeviceGetAddressingMode" (fixed in go-nvlib v0.10.0, NVIDIA/go-nvlib#87).
NVIDIA = Pairing(
    nvml_driver="580.159.04", cuda="13.0", dra_driver="25.12.0",
    source="measured on an NVIDIA H200 with driver 580.159.04 and the enumeration code of k8s-dra-driver-gpu "
           "v25.12.0 (issue 47)",
)


@dataclass(frozen=True)
class Row:
    """One product as its driver publishes a full GPU."""

    driver: str
    product: str                               # productName, exactly as published
    attributes: Mapping[str, Mapping[str, str]]  # name -> {type: value}, as in a class device
    memory: str                                # capacity "memory", a quantity
    source: str
    varies: str
    measured: bool = True
    capacity: Mapping[str, str] | None = None  # other capacities (AMD: computeUnits, simdUnits)

    def device(self) -> dict[str, Any]:
        """The class-device shape of this row (attributes and capacity only)."""
        capacity = {"memory": {"value": self.memory}}
        capacity.update({k: {"value": v} for k, v in (self.capacity or {}).items()})
        return {"driver": self.driver, "attributes": {k: dict(v) for k, v in self.attributes.items()},
                "capacity": capacity}

    def memory_mi(self) -> int:
        return int(Quantity(self.memory).value / 2**20)


def _nvidia(product: str, arch: str, cc: str, memory: str, source: str, varies: str,
            measured: bool = True, brand: str | None = None) -> Row:
    """An NVIDIA row; ``brand`` only where it was seen published (NVML's brand is not on datasheets)."""
    attrs = {"type": {"string": "gpu"}, "productName": {"string": product}, "architecture": {"string": arch},
             "cudaComputeCapability": {"version": cc},
             "driverVersion": {"version": NVIDIA.driver_version},
             "cudaDriverVersion": {"version": NVIDIA.cuda_driver_version}}
    if brand is not None:
        attrs["brand"] = {"string": brand}
    return Row(NVIDIA_DRIVER, product, attrs, memory, source, varies, measured)


_ECC_ON = "HBM with ECC always on; NVML total memory has been the same across 5xx drivers seen; MIG mode replaces it"

ROWS: tuple[Row, ...] = (
    _nvidia("NVIDIA H200", "Hopper", "9.0.0", "143771Mi",
            "measured: an H200 with driver 580.159.04 and v25.12.0's enumeration code (issue 47)", _ECC_ON,
            brand="Nvidia"),
    _nvidia("NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "81559Mi",
            "public ResourceSlice of gpu.nvidia.com with driver 580.126.20 (openshift-psap/composite-dra-driver "
            "README.md, 'Source: GPU driver'); nvidia-smi on H100 SXM and PCIe reports 81559MiB", _ECC_ON,
            brand="Nvidia"),
    _nvidia("NVIDIA A100-SXM4-80GB", "Ampere", "8.0.0", "81920Mi",
            "public nvidia-smi reports (81920MiB, drivers 535 to 570, ECC on and off); not seen in a ResourceSlice",
            _ECC_ON),
    _nvidia("NVIDIA B200", "Blackwell", "10.0.0", "183359Mi",
            "public nvidia-smi reports (183359MiB, drivers 570 to 595); not seen in a ResourceSlice", _ECC_ON),
    _nvidia("NVIDIA L4", "Ada Lovelace", "8.9.0", "23034Mi",
            "public nvidia-smi reports (23034MiB, drivers 525 to 580.65.06 / CUDA 13.0); the prior Modelplane's L4 "
            "classes publish 23034Mi", "GDDR6 with ECC on (the default on data-center parts); ECC off reports more"),
    _nvidia("NVIDIA L40S", "Ada Lovelace", "8.9.0", "46068Mi",
            "public nvidia-smi reports (46068MiB, ECC on); not seen in a ResourceSlice",
            "GDDR6 with ECC on (the default); ECC off reports more"),
    _nvidia("Tesla T4", "Turing", "7.5.0", "15360Mi",
            "public nvidia-smi reports (15360MiB with drivers 525 and 535; 15109MiB with older drivers)",
            "GDDR6 with ECC on; 15109Mi on drivers before 525"),
    Row(AMD_DRIVER, "AMD_Instinct_MI300X_OAM",
        {"type": {"string": "amdgpu"}, "productName": {"string": "AMD_Instinct_MI300X_OAM"},
         "family": {"string": "AI"}, "partitionProfile": {"string": "spx_nps1"},
         "driverVersion": {"version": "6.12.12"}},
        "196592Mi",
        "not measured by us: the ResourceSlice in AMD's DRA driver walkthrough (ROCm/k8s-gpu-dra-driver "
        "docs/demo.md:72-108 at commit 2622427, the same values at 46d2729); AMD's driver, not NVIDIA's: VRAM in "
        "bytes (deviceinfo.go:108)",
        "driverVersion is the amdgpu kernel module's; memory partition modes (NPS4) and compute partitions "
        "(CPX) publish smaller devices",
        measured=False, capacity={"computeUnits": "304", "simdUnits": "1216"}),
)

_BY_KEY = {(r.driver, r.product): r for r in ROWS}


def row(driver: str, product: str) -> Row | None:
    """The table's row for ``product`` under ``driver``, or None."""
    return _BY_KEY.get((driver, product))


def product_of(device: Mapping[str, Any]) -> str | None:
    """The ``productName`` a class device states, or None."""
    value = (device.get("attributes") or {}).get("productName")
    return value.get("string") if isinstance(value, Mapping) else None


def selector_floor(memory: str) -> Quantity:
    """The largest memory a selector may ask for on a device publishing ``memory``:
    :data:`MARGIN` of it, rounded down to a whole GiB."""
    gib = (Quantity(memory).value * MARGIN / 2**30).to_integral_value(rounding=ROUND_FLOOR)
    return Quantity(f"{gib}Gi")


def with_margin(device: Mapping[str, Any]) -> dict[str, Any]:
    """``device`` with its memory lowered by the margin: what a selector must still match."""
    capacity = dict(device.get("capacity") or {})
    memory = capacity.get("memory")
    if isinstance(memory, Mapping) and memory.get("value") is not None:
        mi = (Quantity(memory["value"]).value * MARGIN / 2**20).to_integral_value(rounding=ROUND_FLOOR)
        capacity["memory"] = {"value": f"{mi}Mi"}
    return {**device, "capacity": capacity}


def differences(device: Mapping[str, Any]) -> list[str]:
    """How a class device differs from what its driver publishes for its product, one line each.

    A device whose driver is in the table must name a product the table has; attributes the
    class leaves out are fine (a class may select on fewer), attributes it states must be the
    table's, and its memory must equal the table's.
    """
    driver = device.get("driver", "")
    if driver not in (NVIDIA_DRIVER, AMD_DRIVER):
        return []
    product = product_of(device)
    found = row(driver, product or "")
    if found is None:
        return [(f"productName {product!r} of driver {driver} is not in the value table "
                 f"(lib/modelplane/physical/driver_values.py): add its row with a source")]
    want = found.device()
    out = []
    for name, value in sorted((device.get("attributes") or {}).items()):
        if name in want["attributes"] and dict(value) != want["attributes"][name]:
            out.append(f"attribute {name} is {_show(value)}, the driver publishes {_show(want['attributes'][name])}")
    for name, value in sorted(want["capacity"].items()):
        got = ((device.get("capacity") or {}).get(name) or {}).get("value")
        if got is None and name == "memory":
            out.append(f"capacity memory is missing, the driver publishes {value['value']}")
        elif got is not None and Quantity(got) != Quantity(value["value"]):
            out.append(f"capacity {name} is {got}, the driver publishes {value['value']}")
    return out


def _show(value: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in value.items())


def published(spec: Mapping[str, Any]) -> dict[str, Any]:
    """InferenceClass ``spec`` with each table product's device as its driver publishes it.

    Attributes and capacity of a DRA device whose product is in the table become the table's
    (attributes the table does not know, such as a class's own, are kept); other devices and
    every other field stay as they are. What ``simulate --hardware published`` puts on nodes.
    """
    devices = []
    for dev in spec.get("devices") or []:
        found = row(dev.get("driver", ""), product_of(dev) or "")
        if found is not None and dev.get("claim", "DRA") == "DRA":
            want = found.device()
            dev = {**dev, "attributes": {**(dev.get("attributes") or {}), **want["attributes"]},
                   "capacity": {**(dev.get("capacity") or {}), **want["capacity"]}}
        devices.append(dev)
    return {**spec, "devices": devices}


def gib(quantity: str) -> str:
    """``143771Mi`` -> ``140.4``: GiB with one decimal, for the page's table."""
    return f"{Quantity(quantity).value / 2**30:.1f}"
