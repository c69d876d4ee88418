"""compose-model-endpoint: URL parsing, Backend, TLS, credential injection, real gRPC."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from modelplane.validate.upstream import assert_valid

from tests.support import call, conditions, desired, fatal, request, run, serve_process, status

FN = "compose-model-endpoint"
NAME, NS = "qwen3-8b-0-prod-a", "ml-team"
BACKEND = f"{NAME}-backend"
FILTER = f"{NAME}-credential"


def endpoint(url: str = "http://203.0.113.10", **spec: Any) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelEndpoint",
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {"url": url, "rewritePath": f"/{NS}/{NAME}/", "api": "OpenAI", **spec}}


def backend_spec(rsp) -> dict:
    return desired(rsp)[BACKEND]["spec"]


@dataclass
class Case:
    name: str
    url: str
    want_endpoint: dict
    want_tls: dict | None = None
    tls: dict | None = None


CASES = [
    Case("hostname over plain http: fqdn (an EKS gateway's name)", "http://gw.elb.example.com",
         {"fqdn": {"hostname": "gw.elb.example.com", "port": 80}}),
    Case("IP host over https keeps the Backend (TLS to the upstream)", "https://10.0.0.7:8443",
         {"ip": {"address": "10.0.0.7", "port": 8443}}, {"wellKnownCACertificates": "System"}),
    Case("hostname over https: fqdn, 443, system CAs, SNI",
         "https://api.together.xyz", {"fqdn": {"hostname": "api.together.xyz", "port": 443}},
         {"sni": "api.together.xyz", "wellKnownCACertificates": "System"}),
    Case("https with a CA ref and explicit SNI", "https://models.internal:8443",
         {"fqdn": {"hostname": "models.internal", "port": 8443}},
         {"sni": "gw.internal", "caCertificateRefs": [{"group": "", "kind": "ConfigMap", "name": "corp-ca"}]},
         tls={"sni": "gw.internal", "caCertificateRef": {"name": "corp-ca"}}),
    Case("https with a CA in a Secret: the Backend names the Secret", "https://models.internal",
         {"fqdn": {"hostname": "models.internal", "port": 443}},
         {"sni": "models.internal", "caCertificateRefs": [{"group": "", "kind": "Secret", "name": "corp-ca"}]},
         tls={"caCertificateRef": {"kind": "Secret", "name": "corp-ca"}}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_envoy_backend_where_standard_kinds_cannot_carry_the_endpoint(case: Case):
    extra = {"tls": case.tls} if case.tls else {}
    rsp = run(FN, request(endpoint(case.url, **extra)))
    assert fatal(rsp) is None
    spec = backend_spec(rsp)
    assert spec["endpoints"] == [case.want_endpoint]
    assert spec.get("tls") == case.want_tls
    assert_valid(desired(rsp)[BACKEND])
    assert status(rsp)["routing"] == {
        "backendName": BACKEND, "backendRef": {"group": "gateway.envoyproxy.io", "kind": "Backend", "name": BACKEND}}
    assert not {f"{NAME}-service", f"{NAME}-endpointslice"} & set(desired(rsp))


@pytest.mark.parametrize("url,family,host,port", [
    ("http://203.0.113.10", "IPv4", "203.0.113.10", 80),
    ("http://10.0.0.7:8080/base", "IPv4", "10.0.0.7", 8080),
    ("http://[2001:db8::1]:8000", "IPv6", "2001:db8::1", 8000),
])
def test_plain_http_ip_is_a_selector_less_service_with_one_endpointslice(url, family, host, port):
    rsp = run(FN, request(endpoint(url), observed={BACKEND: {"apiVersion": "gateway.envoyproxy.io/v1alpha1",
                                                               "kind": "Backend", "metadata": {"name": BACKEND}}}))
    d = desired(rsp)
    assert BACKEND not in d  # an Envoy Backend from before is dropped
    svc, eps = d[f"{NAME}-service"], d[f"{NAME}-endpointslice"]
    assert svc["metadata"]["name"] == eps["metadata"]["name"] == BACKEND
    assert "selector" not in svc["spec"] and svc["spec"]["ports"] == [
        {"name": "http", "port": port, "protocol": "TCP", "targetPort": port}]
    assert eps["addressType"] == family and eps["endpoints"] == [{"addresses": [host], "conditions": {"ready": True}}]
    assert eps["ports"] == [{"name": "http", "port": port, "protocol": "TCP"}]
    assert eps["metadata"]["labels"]["kubernetes.io/service-name"] == BACKEND
    # Not the EndpointSlice controllers' own: they must leave it alone.
    assert eps["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == "modelplane.ai"
    for obj in (svc, eps):
        assert_valid(obj)
    assert status(rsp)["routing"] == {"backendName": BACKEND,
                                      "backendRef": {"group": "", "kind": "Service", "name": BACKEND, "port": port}}


@pytest.mark.parametrize("url,why", [
    ("203.0.113.10", "no scheme"),
    ("ftp://example.com", "unsupported scheme"),
    ("http://", "empty host"),
    ("http://example.com:99999", "bad port"),
    ("http://example.com:abc", "bad port"),
    ("http://user:pw@example.com", "credentials in the URL"),
    ("http://example.com/v1?key=1", "query string"),
    ("http://bad_host!.com", "bad host"),
])
def test_bad_url_is_fatal_naming_the_field_and_fix(url, why):
    msg = fatal(run(FN, request(endpoint(url))))
    assert msg and msg.startswith("spec.url:") and why in msg and "scheme://host" in msg


def auth(**over: Any) -> dict:
    return {"apiKeySecretRef": {"name": "together"}, "header": "Authorization", **over}


def test_api_key_is_injected_from_the_secret_never_copied():
    rsp = run(FN, request(endpoint("https://api.together.xyz", auth=auth())))
    f = desired(rsp)[FILTER]
    assert f["kind"] == "HTTPRouteFilter"
    inj = f["spec"]["credentialInjection"]
    assert inj["header"] == "Authorization" and inj["overwrite"] is True
    assert inj["credential"]["valueRef"] == {"group": "", "kind": "Secret", "name": "together"}
    assert status(rsp)["routing"] == {"backendName": BACKEND, "credentialFilterName": FILTER, "backendRef": {
        "group": "gateway.envoyproxy.io", "kind": "Backend", "name": BACKEND}}
    assert conditions(rsp)["Routed"].reason == "Available"
    assert not any(k.lower() in ("data", "stringdata") for obj in desired(rsp).values() for k in obj)


def test_custom_header_is_used():
    rsp = run(FN, request(endpoint("https://api.example.com", auth=auth(header="x-api-key"))))
    assert desired(rsp)[FILTER]["spec"]["credentialInjection"]["header"] == "x-api-key"


def test_secret_layout_the_proxy_cannot_read_is_rejected_at_admission():
    from modelplane import paths
    from modelplane.validate import Validator

    bad = endpoint("https://api.together.xyz", auth=auth(prefix="Bearer "))
    findings = Validator.from_paths([paths.APIS]).validate_document(bad)
    assert [f.path for f in findings] == ["spec.auth.prefix"]


def test_auth_removed_drops_the_filter():
    first = run(FN, request(endpoint("https://api.together.xyz", auth=auth())))
    rsp = run(FN, request(endpoint("https://api.together.xyz"), observed=desired(first)))
    assert FILTER not in desired(rsp) and BACKEND in desired(rsp)


def test_real_grpc_subprocess():
    with serve_process(FN, "--insecure") as address:
        rsp = call(address, request(endpoint("https://api.together.xyz")))
    assert backend_spec(rsp)["endpoints"] == [{"fqdn": {"hostname": "api.together.xyz", "port": 443}}]
