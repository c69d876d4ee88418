"""compose-inference-gateway, in-process and over real gRPC."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from modelplane.validate.upstream import assert_valid

from tests.functions.shapes import Shape, assert_shape
from tests.support import call, conditions, desired, fatal, request, run, serve_process, status

FN = "compose-inference-gateway"


def xr(name: str = "default", **spec: Any) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceGateway", "metadata": {"name": name},
            "spec": spec}


def metallb(*addresses: str) -> dict:
    return xr(loadBalancer="MetalLB", metallb={"addresses": list(addresses or ["172.18.255.200-172.18.255.250"])})


def observed_up(x: dict, address: str | None = "172.18.255.200", programmed: bool = True,
                envoy_ready: bool = True) -> dict:
    first = desired(run(FN, request(x)))
    out = copy.deepcopy(first)
    out["release-envoy-gateway"]["status"] = {"conditions": [
        {"type": "Ready", "status": "True" if envoy_ready else "False", "reason": "Available"}]}
    gw_status: dict[str, Any] = {"conditions": [
        {"type": "Programmed", "status": "True" if programmed else "False", "reason": "Programmed"}]}
    if address:
        gw_status["addresses"] = [{"type": "IPAddress", "value": address}]
    out["gateway"]["status"] = gw_status
    return out


def test_every_composed_resource_passes_its_upstream_schema():
    composed = desired(run(FN, request(metallb())))
    assert {"IPAddressPool", "L2Advertisement"} <= {o["kind"] for o in composed.values()}
    for _, obj in sorted(composed.items()):
        assert_valid(obj)


SHAPES = [
    Shape("envoy gateway runs with the Backend API on",
          xr(), "release-envoy-gateway", lambda o: (
              o["spec"]["forProvider"]["values"]["config"]["envoyGateway"]["extensionApis"]["enableBackend"] is True
              and o["spec"]["forProvider"]["chart"] == {"name": "gateway-helm", "repository": "oci://docker.io/envoyproxy",
                                                        "version": "v1.9.0"}
              and o["spec"]["providerConfigRef"] == {"kind": "ClusterProviderConfig", "name": "default"})),
    Shape("envoy version and values are overridable, Backend API stays on",
          xr(envoyGateway={"version": "v1.8.1", "values": {"deployment": {"replicas": 2}}}),
          "release-envoy-gateway", lambda o: (
              o["spec"]["forProvider"]["chart"]["version"] == "v1.8.1"
              and o["spec"]["forProvider"]["values"]["deployment"] == {"replicas": 2}
              and o["spec"]["forProvider"]["values"]["config"]["envoyGateway"]["extensionApis"]["enableBackend"])),
    Shape("gateway class names the envoy controller",
          xr(), "gatewayclass", lambda o: o["metadata"]["name"] == "modelplane"
          and o["spec"]["controllerName"] == "gateway.envoyproxy.io/gatewayclass-controller"),
    Shape("gateway listens on HTTP 80 for routes from every namespace",
          xr(), "gateway", lambda o: o["metadata"] == {"name": "modelplane", "namespace": "modelplane-system",
                                                       "labels": {"modelplane.ai/managed-by": FN}}
          and o["spec"]["listeners"] == [{"name": "http", "protocol": "HTTP", "port": 80,
                                          "allowedRoutes": {"namespaces": {"from": "All"}}}]),
    Shape("metallb pool takes the addresses",
          metallb("10.0.0.10-10.0.0.20", "10.0.1.0/28"), "metallb-pool",
          lambda o: o["spec"]["addresses"] == ["10.0.0.10-10.0.0.20", "10.0.1.0/28"]
          and o["metadata"]["namespace"] == "metallb-system"),
    Shape("metallb announces the pool on L2",
          metallb(), "metallb-l2", lambda o: o["spec"] == {"ipAddressPools": ["modelplane"]}),
    Shape("metallb release installs into metallb-system",
          metallb(), "release-metallb", lambda o: o["spec"]["forProvider"]["namespace"] == "metallb-system"
          and o["spec"]["forProvider"]["chart"]["name"] == "metallb"),
]


@pytest.mark.parametrize("case", SHAPES, ids=lambda s: s.name)
def test_composed_shape(case: Shape):
    assert_shape(run(FN, request(case.x)), case)


def test_cloud_load_balancer_composes_no_metallb():
    assert not {"release-metallb", "metallb-pool", "metallb-l2"} & set(desired(run(FN, request(xr()))))


def test_switching_back_to_cloud_drops_metallb():
    rsp = run(FN, request(xr(loadBalancer="Cloud"), observed=observed_up(metallb())))
    assert not {"release-metallb", "metallb-pool", "metallb-l2"} & set(desired(rsp))


def test_only_default_is_accepted():
    assert fatal(run(FN, request(xr("other")))).startswith("metadata.name:")


@dataclass
class Address:
    name: str
    observed: dict | None
    address: str | None
    ready: bool
    reason: str


ADDRESSES = [
    Address("nothing observed yet", None, None, False, "Creating"),
    Address("programmed gateway with an address", observed_up(metallb()), "172.18.255.200", True, "Available"),
    Address("address but not programmed", observed_up(metallb(), programmed=False), None, False, "Creating"),
    Address("programmed without an address", observed_up(metallb(), address=None), None, False, "Creating"),
    Address("envoy release not ready", observed_up(metallb(), envoy_ready=False), "172.18.255.200", False, "Creating"),
]


@pytest.mark.parametrize("case", ADDRESSES, ids=lambda a: a.name)
def test_address_and_readiness_come_from_the_observed_gateway(case: Address):
    rsp = run(FN, request(metallb(), observed=case.observed))
    st = status(rsp)
    assert st.get("address") == case.address
    assert st["gateway"] == {"name": "modelplane", "namespace": "modelplane-system"}
    assert rsp.desired.composite.ready == (1 if case.ready else 2)
    assert conditions(rsp)["GatewayReady"].reason == case.reason


def test_over_real_grpc():
    with serve_process(FN, "--insecure") as address:
        rsp = call(address, request(metallb(), observed=observed_up(metallb())))
    assert fatal(rsp) is None
    assert status(rsp)["address"] == "172.18.255.200"
    assert "release-metallb" in desired(rsp)


def test_own_gateway_class_installs_no_envoy_gateway_and_is_ready_once_programmed():
    x = xr(gatewayClassName="cilium")
    first = desired(run(FN, request(x)))
    assert "release-envoy-gateway" not in first and "gatewayclass" not in first
    assert first["gateway"]["spec"]["gatewayClassName"] == "cilium"
    observed = copy.deepcopy(first)
    observed["gateway"]["status"] = {"conditions": [{"type": "Programmed", "status": "True", "reason": "Programmed"}],
                                     "addresses": [{"type": "IPAddress", "value": "198.18.0.2"}]}
    resp = run(FN, request(x, observed=observed))
    assert status(resp)["address"] == "198.18.0.2"
    assert conditions(resp)["GatewayReady"].status == 2
    for obj in first.values():
        assert_valid(obj)
