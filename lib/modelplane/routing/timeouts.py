"""How long a request may take on a route Modelplane composes: written on every rule, never left out.

Left out, the data plane's default decides, and Envoy Gateway's is too short for a model's
answer. Envoy Gateway (v1.9.1) sets a route's timeout only when the HTTPRoute rule has one
(``internal/xds/translator/route.go`` lines 118-123, ``getEffectiveRequestTimeout`` at 442-456),
and Envoy's route timeout, unset, is 15 s, counted until the upstream response "has been
completely processed" (``RouteAction.timeout`` in ``envoy/config/route/v3/route_components.proto``;
go-control-plane's ``route_components.pb.go`` lines 2033-2044, the version Envoy Gateway v1.9.1
pins): a streamed answer is cut at 15 s however steadily its tokens flow.

What is written: ``rules[].timeouts.request`` only, the ModelService's ``spec.timeouts.request``
(default ``1h``, the API's). Envoy Gateway maps it to the Envoy route timeout
(``internal/gatewayapi/route.go`` lines 1086-1095) and raises the route's stream idle timeout
to at least the same (``idleTimeout`` in route.go, 458-493: 1 h, or the request timeout when
longer; ``0s`` disables both). ``backendRequest`` is not written: without a retry policy Envoy
Gateway lets it replace the request timeout (route.go 1099-1105), so one value says it all.

Why 1 h and not "no limit": a large reasoning model may stream tens of thousands of tokens, which
at 20 tokens a second is about half an hour; an hour leaves room for that and still frees a
connection whose engine stalled, where ``0s`` would hold it for ever (Envoy Gateway drops the
idle timeout with it). A team that needs longer, or shorter to fail fast, sets it per service.

Traefik (the lab's data plane, v3.7.13) implements neither ``timeouts`` feature
(``pkg/provider/kubernetes/gateway/features.go``, ``extendedHTTPRouteFeatures``) and cuts no
stream, so the lab cannot show the 15 s cut; ``tests/lab/long_stream.py`` runs Envoy itself
on a route translated as Envoy Gateway translates ours.
"""
from __future__ import annotations

from modelplane.schemas.model_service import ModelServiceSpecTimeouts

REQUEST_TIMEOUT: str = ModelServiceSpecTimeouts().request or "1h"   # the API's default (ModelService)


def rule_timeouts(request: str | None = None) -> dict[str, str]:
    """The ``timeouts`` of a composed HTTPRoute rule (``request`` unset: the default)."""
    return {"request": request or REQUEST_TIMEOUT}
