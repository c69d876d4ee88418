"""A ModelEndpoint's backend: standard Gateway API where it can be, Envoy Gateway where it must.

A plain ``http`` URL with an IP address (every in-fleet replica: its cluster
gateway's address) becomes a selector-less Service with one EndpointSlice,
which every conformant Gateway API implementation routes to (Core). A
hostname, https or an API key needs what only Envoy Gateway offers: its
``Backend`` (fqdn endpoints, TLS to the upstream) and credential injection,
listed in the docs as Envoy-only. An EndpointSlice cannot carry a hostname,
so a cluster gateway published as one (EKS) takes the Backend too.

URL rules (a bad URL is an InputError on ``spec.url`` with the fix):
``http`` or ``https`` scheme, a host, an optional port 1-65535, an optional
base path; no userinfo, query or fragment. An IP host becomes an ``ip``
endpoint, a hostname an ``fqdn`` endpoint; default ports are 80/443. https
adds Backend TLS: SNI = the hostname (or ``spec.tls.sni``), the system CA
bundle unless ``spec.tls.caCertificateRef`` names a ConfigMap (the default
kind) or a Secret holding ``ca.crt``. The kind is passed through as written:
Envoy Gateway's Backend reads either (its CRD, ``tls.caCertificateRefs``),
whereas Gateway API's BackendTLSPolicy makes only a ConfigMap Core and a
Secret implementation-specific; the Backend is what carries TLS here.

API keys: Envoy Gateway's HTTPRouteFilter ``credentialInjection`` makes the
proxy read a Secret and set a header on the upstream request, so the key is
never copied into anything Modelplane writes. Envoy Gateway reads the
Secret's ``credential`` key and injects it verbatim (no prefix of its own),
so the API asks for exactly that layout: the Secret holds the whole header
value under ``credential`` (e.g. ``Bearer sk-...``).
"""
from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from modelplane.errors import InputError

BACKEND_API = "gateway.envoyproxy.io/v1alpha1"
BACKEND_GROUP = "gateway.envoyproxy.io"
SLICE_API = "discovery.k8s.io/v1"
SLICE_MANAGER = "modelplane.ai"   # the EndpointSlice controllers leave slices another manager owns
PORT_NAME = "http"
CREDENTIAL_KEY = "credential"
CA_KINDS = ("ConfigMap", "Secret")   # spec.tls.caCertificateRef.kind: the XRD's enum, default first
DEFAULT_PORTS = {"http": 80, "https": 443}
URL_FIELD = "spec.url"
URL_FIX = "use scheme://host[:port][/base] with scheme http or https, e.g. https://api.together.xyz"


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    is_ip: bool
    base: str

    @property
    def tls(self) -> bool:
        return self.scheme == "https"


def parse_url(url: str) -> Target:
    """Split an endpoint URL or raise InputError naming spec.url."""
    def bad(what: str) -> InputError:
        return InputError(URL_FIELD, f"{what} in {url!r}: {URL_FIX}")

    if "://" not in url:
        raise bad("no scheme")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise bad(f"unsupported scheme {parts.scheme!r}")
    if "@" in parts.netloc:
        raise bad("credentials in the URL are not allowed (use spec.auth)")
    if parts.query or url.rstrip().endswith("?"):
        raise bad("a query string is not allowed")
    if parts.fragment:
        raise bad("a fragment is not allowed")
    try:
        port = parts.port
    except ValueError:
        raise bad("bad port") from None
    host = parts.hostname or ""
    if not host:
        raise bad("empty host")
    if port is not None and not 1 <= port <= 65535:
        raise bad("bad port")
    if parts.netloc.endswith(":"):
        raise bad("bad port")
    try:
        ipaddress.ip_address(host)
        is_ip = True
    except ValueError:
        is_ip = False
        if not _is_hostname(host):
            raise bad(f"bad host {host!r}") from None
    return Target(scheme, host, port or DEFAULT_PORTS[scheme], is_ip, parts.path or "/")


def _is_hostname(host: str) -> bool:
    labels = host.rstrip(".").split(".")
    return all(0 < len(p) <= 63 and p.replace("-", "").isalnum() and not p.startswith("-")
               and not p.endswith("-") for p in labels) and len(host) <= 253


def backend(name: str, namespace: str, target: Target, tls: Mapping[str, Any] | None,
            labels: Mapping[str, str]) -> dict:
    """The Backend for one endpoint."""
    if target.is_ip:
        endpoint = {"ip": {"address": target.host, "port": target.port}}
    else:
        endpoint = {"fqdn": {"hostname": target.host, "port": target.port}}
    spec: dict[str, Any] = {"endpoints": [endpoint]}
    if target.tls:
        tls = tls or {}
        out: dict[str, Any] = {}
        sni = tls.get("sni") or (None if target.is_ip else target.host)
        if sni:
            out["sni"] = sni
        ca = tls.get("caCertificateRef") or {}
        if ca.get("name"):
            out["caCertificateRefs"] = [{"group": "", "kind": ca.get("kind") or CA_KINDS[0], "name": ca["name"]}]
        else:
            out["wellKnownCACertificates"] = "System"
        spec["tls"] = out
    return {"apiVersion": BACKEND_API, "kind": "Backend",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)}, "spec": spec}


def credential_filter(name: str, namespace: str, auth: Mapping[str, Any],
                      labels: Mapping[str, str]) -> dict:
    """An HTTPRouteFilter that injects the API key header from the endpoint's Secret."""
    return {
        "apiVersion": BACKEND_API,
        "kind": "HTTPRouteFilter",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"credentialInjection": {
            "header": auth.get("header") or "Authorization",
            "overwrite": True,
            "credential": {"valueRef": {"group": "", "kind": "Secret",
                                        "name": auth["apiKeySecretRef"]["name"]}},
        }},
    }


def standard(target: Target, auth: Mapping[str, Any] | None) -> bool:
    """Whether a Service and an EndpointSlice can carry this endpoint (plain http to an IP, no key)."""
    return target.is_ip and not target.tls and not auth


def service(name: str, namespace: str, target: Target, labels: Mapping[str, str]) -> list[dict]:
    """A selector-less Service and its EndpointSlice pointing at ``target``."""
    family = "IPv6" if ipaddress.ip_address(target.host).version == 6 else "IPv4"
    port = {"name": PORT_NAME, "port": target.port, "protocol": "TCP"}
    svc = {"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
           "spec": {"type": "ClusterIP", "ipFamilies": [family],
                    "ports": [{**port, "targetPort": target.port}]}}
    slice_labels = {**labels, "kubernetes.io/service-name": name,
                    "endpointslice.kubernetes.io/managed-by": SLICE_MANAGER}
    eps = {"apiVersion": SLICE_API, "kind": "EndpointSlice",
           "metadata": {"name": name, "namespace": namespace, "labels": dict(sorted(slice_labels.items()))},
           "addressType": family,
           "endpoints": [{"addresses": [target.host], "conditions": {"ready": True}}],
           "ports": [port]}
    return [svc, eps]


def backend_ref(name: str, target: Target, standard_kinds: bool) -> dict:
    """How a route names this endpoint's backend."""
    if standard_kinds:
        return {"group": "", "kind": "Service", "name": name, "port": target.port}
    return {"group": BACKEND_GROUP, "kind": "Backend", "name": name}
