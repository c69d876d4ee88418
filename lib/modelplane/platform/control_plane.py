"""compose-inference-gateway: the one unified endpoint on the control plane.

Envoy Gateway (with its Backend API on, since ModelEndpoints compose
Backends) is installed by a Release through the control plane's own helm
ClusterProviderConfig ``default`` (in-cluster credentials, set up with
Crossplane). The GatewayClass and Gateway are Gateway API objects Crossplane
applies in-cluster directly. On kind, MetalLB hands the Gateway's Service an
address from ``spec.metallb.addresses``.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane import conditions as cond
from modelplane import labels
from modelplane.errors import InputError
from modelplane.pipeline.composition import Composition
from modelplane.pipeline.xr import parse
from modelplane.platform import gateway
from modelplane.platform.common import (
    GATEWAY_READY,
    NAMESPACE,
    cluster_provider_config,
    condition_true,
    deep_merge,
    meta,
)
from modelplane.platform.stack import RELEASE_API
from modelplane.schemas.inference_gateway import InferenceGateway

HELM_PROVIDER_CONFIG = "default"
ENVOY = {"name": "gateway-helm", "repository": "oci://docker.io/envoyproxy", "version": "v1.9.0",
         "namespace": "envoy-gateway-system"}
ENVOY_VALUES = {"config": {"envoyGateway": {"extensionApis": {"enableBackend": True}}}}
METALLB = {"name": "metallb", "repository": "https://metallb.github.io/metallb", "version": "0.15.2",
           "namespace": "metallb-system"}
METALLB_API = "metallb.io/v1beta1"
METALLB_KEYS = ("release-metallb", "metallb-pool", "metallb-l2")


def read(c: Composition) -> dict[str, Any]:
    # Admission enforces this; render and a changed XRD do not.
    if c.name != "default":
        raise InputError("metadata.name", f"there is one InferenceGateway and it is named default, not {c.name!r}")
    return parse(InferenceGateway, c.xr).spec.model_dump(by_alias=True, exclude_none=True)


def _release(name: str, chart: Mapping[str, str], version: str, values: Mapping[str, Any],
             lbls: Mapping[str, str]) -> dict[str, Any]:
    fp: dict[str, Any] = {"chart": {"name": chart["name"], "repository": chart["repository"], "version": version},
                          "namespace": chart["namespace"]}
    if values:
        fp["values"] = dict(values)
    return {"apiVersion": RELEASE_API, "kind": "Release", "metadata": meta(name, lbls),
            "spec": {"forProvider": fp, "providerConfigRef": cluster_provider_config(HELM_PROVIDER_CONFIG)}}


def compose_envoy(c: Composition, spec: Mapping[str, Any], lbls: Mapping[str, str]) -> None:
    own_class = spec.get("gatewayClassName") or ""
    if own_class:  # bring your own gateway: no Envoy Gateway, no GatewayClass of ours
        c.drop("release-envoy-gateway")
        c.drop("gatewayclass")
        c.desire("gateway", gateway.gateway(lbls, class_name=own_class), ready=bool(address(c)))
        return
    eg = spec.get("envoyGateway") or {}
    values = deep_merge(ENVOY_VALUES, eg.get("values"))
    c.desire("release-envoy-gateway", _release("envoy-gateway", ENVOY, eg.get("version") or ENVOY["version"],
                                               values, lbls))
    c.desire("gatewayclass", gateway.gateway_class(lbls),
             ready=condition_true(c.observed.get("gatewayclass"), "Accepted"))
    c.desire("gateway", gateway.gateway(lbls), ready=bool(address(c)))


def compose_metallb(c: Composition, spec: Mapping[str, Any], lbls: Mapping[str, str]) -> None:
    """MetalLB and its address pool when asked for; dropped when switched back to Cloud."""
    if spec.get("loadBalancer") != "MetalLB":
        for key in METALLB_KEYS:
            c.drop(key)
        return
    ns = METALLB["namespace"]
    c.desire("release-metallb", _release("metallb", METALLB, METALLB["version"], {}, lbls))
    c.desire("metallb-pool", {
        "apiVersion": METALLB_API, "kind": "IPAddressPool", "metadata": meta("modelplane", lbls, ns),
        "spec": {"addresses": list((spec.get("metallb") or {}).get("addresses") or [])},
    }, ready="metallb-pool" in c.observed)
    c.desire("metallb-l2", {
        "apiVersion": METALLB_API, "kind": "L2Advertisement", "metadata": meta("modelplane", lbls, ns),
        "spec": {"ipAddressPools": ["modelplane"]},
    }, ready="metallb-l2" in c.observed)


def address(c: Composition) -> str:
    """The observed Gateway's first address, only once it is Programmed."""
    observed = c.observed.get("gateway")
    if not condition_true(observed, "Programmed"):
        return ""
    return gateway.address((observed or {}).get("status"))


def report(c: Composition, spec: Mapping[str, Any]) -> None:
    addr = address(c)
    c.set_status(gateway=gateway.ref(), **({"address": addr} if addr else {}))
    envoy_ready = bool(spec.get("gatewayClassName")) or condition_true(c.observed.get("release-envoy-gateway"),
                                                                         "Ready")
    if addr and envoy_ready:
        c.condition(GATEWAY_READY, True, cond.AVAILABLE, f"Gateway {NAMESPACE}/modelplane serves at {addr}")
    elif not envoy_ready:
        c.condition(GATEWAY_READY, False, cond.CREATING, "waiting for the Envoy Gateway release to become Ready")
    else:
        c.condition(GATEWAY_READY, False, cond.CREATING,
                    f"waiting for Gateway {NAMESPACE}/modelplane to be Programmed with an address")
    c.set_ready(bool(addr) and envoy_ready)


def gateway_labels(c: Composition) -> dict[str, str]:
    return {labels.MANAGED_BY: c.function}
