"""Every HTTPRoute Modelplane composes carries a request timeout (lib/modelplane/routing/timeouts.py).

Without one, Envoy Gateway leaves the Envoy route timeout unset and Envoy's 15 s default cuts
every longer answer, streamed or not. Routes come from two functions: compose-model-service (the
control plane's route and one per hosting cluster) and compose-model-replica (the replica's own
route). The upgrade adds the field to those routes and changes nothing else.
"""
from __future__ import annotations

import copy
import json

import pytest
from modelplane.routing.timeouts import REQUEST_TIMEOUT
from modelplane.validate.upstream import assert_valid

from tests.functions import replicas, services
from tests.functions.services import endpoint, service
from tests.support import desired, fatal, request, run


def _routes(rsp) -> dict[str, dict]:
    """Every HTTPRoute composed, by resource name (remote ones unwrapped from their Object)."""
    out = {}
    for name, obj in desired(rsp).items():
        manifest = obj["spec"]["forProvider"]["manifest"] if obj["kind"] == "Object" else obj
        if manifest["kind"] == "HTTPRoute":
            out[name] = manifest
    return out


def _service(timeouts: dict | None = None):
    xr = service(({"modelplane.ai/deployment": "qwen"}, 9), ({"provider": "together"}, 1))
    if timeouts is not None:
        xr["spec"]["timeouts"] = timeouts
    fleet = [endpoint("q-0", cluster="prod-a"), endpoint("q-1", cluster="prod-b")]
    required = {"gateway": [services.gateway()], "endpoints-0": fleet,
                "endpoints-1": [endpoint("together", credential=True, cluster=None)]}
    return run(services.FN, request(xr, required=required))


def test_the_default_is_an_hour_from_the_api():
    # The ModelService API's default (apis/modelservices/definition.yaml), read from its schema.
    assert REQUEST_TIMEOUT == "1h"


@pytest.mark.parametrize("timeouts,want", [
    (None, "1h"),                      # an XR read before the API server defaulted it
    ({}, "1h"),
    ({"request": "2h30m"}, "2h30m"),
    ({"request": "0s"}, "0s"),         # no limit: passed on as Gateway API spells it
], ids=["absent", "empty", "longer", "no limit"])
def test_every_route_of_a_service_carries_its_request_timeout(timeouts, want):
    rsp = _service(timeouts)
    assert fatal(rsp) is None
    routes = _routes(rsp)
    assert sorted(routes) == ["route-prod-a", "route-prod-b", services.ROUTE]   # both hops, every cluster
    for name, r in routes.items():
        assert_valid(r)   # Gateway API v1.6.1's own schema and CEL rules
        assert [rule.get("timeouts") for rule in r["spec"]["rules"]] == [{"request": want}], name


@pytest.mark.parametrize("value", ["1 hour", "60", "1d", "-1s"])
def test_a_request_timeout_that_is_no_gateway_api_duration_is_refused_naming_the_field(value):
    # Admission refuses it first (the XRD's pattern); a function that still sees one says the same.
    message = fatal(_service({"request": value})) or ""
    assert message.startswith("spec.timeouts.request: String should match pattern '^([0-9]{1,5}(h|m|s|ms)){1,4}$'")


@pytest.mark.parametrize("xr", [replicas.replica(), replicas.replica([replicas.gang()], cache=True), replicas.pd()],
                         ids=["standalone", "gang", "prefill-decode"])
def test_the_replica_route_carries_the_default_timeout(xr):
    routes = _routes(run(replicas.FN, request(xr)))
    assert len(routes) == 1
    (r,) = routes.values()
    assert_valid(r)
    assert [rule.get("timeouts") for rule in r["spec"]["rules"]] == [{"request": REQUEST_TIMEOUT}]


def _without_timeouts(obj: dict) -> dict:
    """A resource as the release before route timeouts composed it."""
    old = copy.deepcopy(obj)
    manifest = old["spec"]["forProvider"]["manifest"] if old["kind"] == "Object" else old
    for rule in (manifest.get("spec") or {}).get("rules") or []:
        rule.pop("timeouts", None)
    return old


@pytest.mark.parametrize("xr", [replicas.replica(), replicas.replica([replicas.gang()], cache=True), replicas.pd()],
                         ids=["standalone", "gang", "prefill-decode"])
def test_an_upgrade_changes_the_replica_route_only(xr):
    """A replica placed by the release before: its observed children carry no timeouts. The new
    release composes the same workloads (no pod restarts) and adds the field to its route."""
    first = desired(run(replicas.FN, request(xr)))
    observed = {name: _without_timeouts(obj) for name, obj in first.items()}
    after = desired(run(replicas.FN, request(xr, observed=observed)))
    assert sorted(after) == sorted(observed)                 # nothing created, nothing dropped
    changed = sorted(n for n in after if after[n] != observed[n])
    routes = sorted(_routes(run(replicas.FN, request(xr))))
    assert changed == routes                                 # the route, and nothing else
    for name in changed:
        assert _without_timeouts(after[name]) == observed[name]
    assert "timeouts" not in json.dumps({n: o for n, o in after.items() if n not in routes})


def test_an_upgrade_updates_the_service_routes_in_place():
    first = desired(_service())
    observed = {name: _without_timeouts(obj) for name, obj in first.items()}
    xr = service(({"modelplane.ai/deployment": "qwen"}, 9), ({"provider": "together"}, 1))
    required = {"gateway": [services.gateway()],
                "endpoints-0": [endpoint("q-0", cluster="prod-a"), endpoint("q-1", cluster="prod-b")],
                "endpoints-1": [endpoint("together", credential=True, cluster=None)]}
    after = desired(run(services.FN, request(xr, required=required, observed=observed)))
    assert sorted(after) == sorted(observed)                 # same names: updated, not replaced
    for name, obj in after.items():
        assert _without_timeouts(obj) == observed[name], name
