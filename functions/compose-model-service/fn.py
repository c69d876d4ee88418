"""compose-model-service: one OpenAI-compatible endpoint over ModelEndpoints.

Recipe: require the InferenceGateway ``default`` and, per spec.endpoints[i],
the ModelEndpoints matching its selector in this namespace only; wait (keeping
the observed route) until all are fetched; compose one HTTPRoute with exact
weights (lib/modelplane/routing/service.py); name every selector that matches nothing
and every endpoint not routed yet. When no endpoint is routable at all, the
last observed route is kept rather than replaced by one with no backends.
"""
from modelplane import conditions as C
from modelplane import labels as L
from modelplane.naming import dns_label
from modelplane.pipeline.composition import Composition
from modelplane.pipeline.xr import parse
from modelplane.routing import service as S
from modelplane.schemas.model_service import ModelService

FUNCTION = "compose-model-service"
DEFAULT_GATEWAY = {"name": "modelplane", "namespace": "modelplane-system"}


def compose(c: Composition) -> None:
    ms = parse(ModelService, c.xr)
    c.require("gateway", "modelplane.ai/v1alpha1", "InferenceGateway", match_name="default")
    for i, entry in enumerate(ms.spec.endpoints):
        c.require(f"endpoints-{i}", "modelplane.ai/v1alpha1", "ModelEndpoint",
                  match_labels=(entry.selector.matchLabels or {}), namespace=c.namespace)

    gateways = c.required("gateway")
    fetched = [c.required(f"endpoints-{i}") for i in range(len(ms.spec.endpoints))]
    if gateways is None or any(items is None for items in fetched) or not gateways:
        missing = "InferenceGateway default" if not gateways else "ModelEndpoints"
        c.condition(C.SYNCED_INPUTS, False, C.WAITING_FOR_INPUTS,
                    f"waiting for {missing}; the observed route is kept unchanged")
        c.set_ready(False)
        return
    gw_status = gateways[0].get("status") or {}
    gateway = {**DEFAULT_GATEWAY, **(gw_status.get("gateway") or {})}

    found = S.select(c.spec.get("endpoints") or [], fetched, c.namespace)
    endpoints, no_match, unrouted = found.endpoints, found.no_match, found.unrouted

    route_name = dns_label(c.name, "route")
    if not endpoints and route_name in c.observed:
        # A route with no backend answers every request with an error; the
        # last working one is better while endpoints come and go. It is kept
        # unchanged (the runtime seeded it) and the condition says why.
        c.condition(C.ROUTED, False, C.NO_MATCH,
                    "; ".join(no_match + unrouted + ["the observed route is kept unchanged"]))
        c.condition(C.SYNCED_INPUTS, True, C.INPUTS_RESOLVED, "gateway and endpoints fetched")
        c.set_ready(False)
        return
    weights = S.split_weights(found.groups)
    labels = {L.MANAGED_BY: FUNCTION}
    c.desire(route_name, S.route(c.name, c.namespace, gateway, list(endpoints.values()), weights, labels),
             ready=True)

    status = {"endpoints": [{"name": n, "weight": w} for n, w in weights.items()]}
    if gw_status.get("address"):
        status["address"] = f"http://{gw_status['address']}/{c.namespace}/{c.name}"
    c.set_status(**status)
    if no_match:
        c.condition(C.ROUTED, False, C.NO_MATCH, "; ".join(no_match + unrouted))
    elif unrouted:
        c.condition(C.ROUTED, False, C.WAITING_FOR_INPUTS, "; ".join(unrouted) + "; skipped until routed")
    else:
        c.condition(C.ROUTED, True, C.AVAILABLE, f"routing to {len(endpoints)} endpoint(s)")
    c.condition(C.SYNCED_INPUTS, True, C.INPUTS_RESOLVED, "gateway and endpoints fetched")
    c.set_ready(bool(endpoints) and "address" in status)
