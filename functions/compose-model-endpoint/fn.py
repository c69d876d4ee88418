"""compose-model-endpoint: an Envoy Gateway Backend for one reachable endpoint.

Recipe: check spec.url (the fix named on failure), compose the Backend (TLS for
https) and, for an API key, the credential-injection filter that reads the
Secret at the proxy; publish their names in status.routing for the
ModelService.
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

    name = dns_label(c.name, "backend")
    c.desire(name, B.backend(name, c.namespace, target, spec.get("tls"), labels), ready=True)
    routing = {"backendName": name}

    filter_name = dns_label(c.name, "credential")
    auth = spec.get("auth")
    if auth:
        c.desire(filter_name, B.credential_filter(filter_name, c.namespace, auth, labels), ready=True)
        routing["credentialFilterName"] = filter_name
        c.condition(C.ROUTED, True, C.AVAILABLE, f"Backend {name} with credential filter {filter_name}")
    else:
        c.drop(filter_name)  # auth removed: stop injecting the key
        c.condition(C.ROUTED, True, C.AVAILABLE, f"Backend {name}")
    c.set_status(routing=routing)
    c.set_ready(True)
