"""compose-model-endpoint: a route target for one reachable endpoint.

Recipe: check spec.url (the fix named on failure); compose a selector-less
Service and EndpointSlice for a plain http IP endpoint (every in-fleet
replica), else an Envoy Gateway Backend (TLS for https) and, for an API key,
the credential-injection filter that reads the Secret at the proxy; publish
the backend reference in status.routing for the ModelService.
"""
from modelplane import conditions as C
from modelplane import labels as L
from modelplane.naming import dns_label
from modelplane.pipeline.composition import Composition
from modelplane.pipeline.xr import parse
from modelplane.routing import backend as B
from modelplane.schemas.model_endpoint import ModelEndpoint

FUNCTION = "compose-model-endpoint"


def compose(c: Composition) -> None:
    target = B.parse_url(str(c.spec.get("url", "")))  # the precise URL message before the schema's
    me = parse(ModelEndpoint, c.xr)
    labels = {L.MANAGED_BY: FUNCTION}
    spec = me.model_dump(exclude_none=True)["spec"]
    auth = spec.get("auth")
    standard = B.standard(target, auth)

    name = dns_label(c.name, "backend")
    service_keys = (dns_label(c.name, "service"), dns_label(c.name, "endpointslice"))
    filter_name = dns_label(c.name, "credential")
    if standard:
        for key, obj in zip(service_keys, B.service(name, c.namespace, target, labels)):
            c.desire(key, obj, ready=True)
        c.drop(name)   # it was an Envoy Backend before
        what = f"Service {name} with an EndpointSlice to {target.host}:{target.port}"
    else:
        for key in service_keys:
            c.drop(key)
        c.desire(name, B.backend(name, c.namespace, target, spec.get("tls"), labels), ready=True)
        what = f"Envoy Gateway Backend {name}"
    routing = {"backendName": name, "backendRef": B.backend_ref(name, target, standard)}

    if auth:
        c.desire(filter_name, B.credential_filter(filter_name, c.namespace, auth, labels), ready=True)
        routing["credentialFilterName"] = filter_name
        what += f" with credential filter {filter_name}"
    else:
        c.drop(filter_name)  # auth removed: stop injecting the key
    c.condition(C.ROUTED, True, C.AVAILABLE, what)
    c.set_status(routing=routing)
    c.set_ready(True)
