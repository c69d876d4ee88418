"""compose-model-service: one OpenAI-compatible endpoint over ModelEndpoints.

Recipe: require the InferenceGateway ``default`` and, per spec.endpoints[i],
the ModelEndpoints matching its selector in this namespace only; wait (keeping
the observed routes) until all are fetched; compose the HTTPRoute on the
InferenceGateway with exact weights and, per cluster hosting selected
replicas, an Object carrying the service's route on that cluster's gateway
(two hops: lib/modelplane/routing/service.py), both with the service's
request timeout (lib/modelplane/routing/timeouts.py); name every selector that
matches nothing and every endpoint not routed yet. When no endpoint is
routable at all, the last observed routes are kept rather than replaced by
ones with no backends.
"""
from modelplane import conditions as C
from modelplane import labels as L
from modelplane.naming import dns_label
from modelplane.objects import remote_object
from modelplane.pipeline.composition import Composition
from modelplane.pipeline.xr import parse
from modelplane.platform import ordering
from modelplane.routing import service as S
from modelplane.schemas.model_service import ModelService

FUNCTION = "compose-model-service"
DEFAULT_GATEWAY = {"name": "modelplane", "namespace": "modelplane-system"}
CLUSTER_ROUTE = "route-"   # composition resource names of the routes on workload clusters


def compose(c: Composition) -> None:
    ms = parse(ModelService, c.xr)
    c.require("gateway", "modelplane.ai/v1alpha1", "InferenceGateway", match_name="default")
    for i, entry in enumerate(ms.spec.endpoints):
        c.require(f"endpoints-{i}", "modelplane.ai/v1alpha1", "ModelEndpoint",
                  match_labels=(entry.selector.matchLabels or {}), namespace=c.namespace)

    route_name = dns_label(c.name, "route")
    # What the routes carry as observed: a draining replica is deleted only once it is in no list.
    routed = S.routed_backends([c.observed.get(k) for k in sorted(c.observed)
                                if k == route_name or k.startswith(CLUSTER_ROUTE)])
    c.set_status(routedBackends=routed)

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
    if not endpoints and route_name in c.observed and not found.leaving:
        # A route with no backend answers every request with an error; the
        # last working one is better while endpoints come and go. It is kept
        # unchanged (the runtime seeded it) and the condition says why. Not
        # when Modelplane took endpoints out on purpose: a draining replica
        # is deleted only once no route carries it.
        c.condition(C.ROUTED, False, C.NO_MATCH,
                    "; ".join(no_match + unrouted + ["the observed route is kept unchanged"]))
        c.condition(C.SYNCED_INPUTS, True, C.INPUTS_RESOLVED, "gateway and endpoints fetched")
        c.set_ready(False)
        return
    weights = S.split_weights(found.groups)
    endpoints, conflicts = S.one_path(found, weights)
    labels = {L.MANAGED_BY: FUNCTION}
    timeout = ms.spec.timeouts.request if ms.spec.timeouts else None   # None: the API's default
    c.desire(route_name, S.route(c.name, c.namespace, gateway, list(endpoints.values()), weights, labels,
                                 request_timeout=timeout), ready=True)
    composed = {}
    for hop in S.cluster_routes(c.name, c.namespace, list(endpoints.values()), weights, labels,
                                request_timeout=timeout):
        key = f"{CLUSTER_ROUTE}{hop.cluster}"
        composed[key] = remote_object(dns_label(c.name, "route", hop.cluster), hop.manifest, hop.provider_config,
                                      namespace=c.namespace, labels=labels, readiness="SuccessfulCreate")
        c.desire(key, composed[key])
    for key in sorted(c.observed):
        if key.startswith(CLUSTER_ROUTE) and key not in composed:
            c.drop(key)   # no selected replica left on that cluster
    # Deleting a cluster must not strand the routes on it (lib/modelplane/platform/ordering.py).
    ordering.hold_provider_configs(c, composed)
    unrouted = unrouted + conflicts

    status = {"endpoints": [{"name": n, "weight": w} for n, w in weights.items()], "routedBackends": routed}
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
