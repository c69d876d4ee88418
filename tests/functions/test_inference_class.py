"""compose-inference-class: checks admission cannot make, and the summary."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.support import fatal, request, run, status

FN = "compose-inference-class"


def device(name: str = "gpu", **extra: Any) -> dict:
    return {"name": name, "driver": "gpu.nvidia.com", "deviceClassName": "gpu.nvidia.com", **extra}


def klass(*devices: dict) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": "c"},
            "spec": {"devices": list(devices or [device()])}}


@dataclass
class Case:
    name: str
    devices: list[dict]
    field: str | None   # the field a FATAL names; None = accepted


CASES = [
    Case("plain DRA gpu is accepted", [device()], None),
    Case("DRA device without deviceClassName", [{"name": "gpu", "driver": "gpu.nvidia.com"}], "spec.devices[0].deviceClassName"),
    Case("synthetic device needs no deviceClassName", [{"name": "nic", "driver": "nic", "claim": "Synthetic"}], None),
    Case("bad quantity", [device(capacity={"memory": {"value": "80 GiB"}})], "spec.devices[0].capacity[memory].value"),
    Case("attribute with two types", [device(attributes={"arch": {"string": "x", "int": 1}})],
         "spec.devices[0].attributes[arch]"),
    Case("bad version attribute", [device(attributes={"driverVersion": {"version": "v5"}})],
         "spec.devices[0].attributes[driverVersion].version"),
    Case("qualified attribute name", [device(attributes={"nic.nvidia.com/linkType": {"string": "ib"}})], None),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_class_checks(case: Case):
    msg = fatal(run(FN, request(klass(*case.devices))))
    if case.field is None:
        assert msg is None
    else:
        assert msg and msg.startswith(case.field + ":")


def test_summary_and_ready():
    rsp = run(FN, request(klass(device(count=8, capacity={"memory": {"value": "80Gi"}}),
                                {"name": "nic", "driver": "nic.nvidia.com", "claim": "Synthetic"})))
    assert status(rsp)["summary"] == "8x gpu (gpu.nvidia.com, 80Gi memory) + 1x nic (nic.nvidia.com, Synthetic)"
    assert rsp.desired.composite.ready == 1


def test_status_lists_the_clouds_the_class_can_provision_on():
    from tests.support import request, run, status

    xr = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": "c"},
          "spec": {"devices": [{"name": "gpu", "driver": "gpu.nvidia.com", "count": 1,
                                "deviceClassName": "gpu.nvidia.com"}],
                   "provisioning": {"gke": {"machineType": "g2-standard-8"}, "eks": {"instanceType": "g6.xlarge"},
                                    "aks": {"vmSize": "Standard_NC24ads_A100_v4"}}}}
    assert status(run("compose-inference-class", request(xr)))["providers"] == ["AKS", "EKS", "GKE"]
