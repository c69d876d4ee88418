"""compose-model-service: weights, rewrites, no-match, tenancy, nothing lost, real gRPC."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.routing.service import split_weights
from modelplane.validate.upstream import assert_valid

from tests.functions.services import FN, NAME, NS, ROUTE, endpoint, gateway, service
from tests.support import call, conditions, desired, fatal, request, run, serve_process, status


def run_with(xr: dict, *groups: list[dict], gw: list | None = None, observed=None):
    required = {"gateway": gw if gw is not None else [gateway()]}
    required.update({f"endpoints-{i}": items for i, items in enumerate(groups)})
    return run(FN, request(xr, required=required, observed=observed))


def route(rsp) -> dict:
    return desired(rsp)[ROUTE]


def refs(rsp) -> dict[str, dict]:
    return {r["name"]: r for r in route(rsp)["spec"]["rules"][0].get("backendRefs", [])}


# ----- weights ---------------------------------------------------------------
@dataclass
class W:
    name: str
    groups: list
    want: dict


WEIGHTS = [
    W("3:1 over 2 and 1 endpoints", [(3, ["a", "b"]), (1, ["c"])], {"a": 3, "b": 3, "c": 2}),
    W("9:1 over 1 and 1", [(9, ["pd"]), (1, ["together"])], {"pd": 9, "together": 1}),
    W("1:1 over 3 and 2 never rounds to zero", [(1, ["a", "b", "c"]), (1, ["d", "e"])],
      {"a": 2, "b": 2, "c": 2, "d": 3, "e": 3}),
    W("equal weights reduce by gcd", [(4, ["a"]), (4, ["b"])], {"a": 1, "b": 1}),
    W("weight 0 keeps its endpoints at 0", [(0, ["a"]), (2, ["b"])], {"a": 0, "b": 1}),
    W("an empty entry adds nothing", [(5, []), (2, ["b", "c"])], {"b": 1, "c": 1}),
    W("an endpoint in two entries gets the sum", [(1, ["a", "b"]), (1, ["a"])], {"a": 3, "b": 1}),
    W("huge weights are capped, never zero", [(1_000_000, ["a"]), (1, ["b", "c", "d"])],
      {"a": 1_000_000, "b": 1, "c": 1, "d": 1}),
]


@pytest.mark.parametrize("case", WEIGHTS, ids=[c.name for c in WEIGHTS])
def test_split_weights(case: W):
    assert split_weights(case.groups) == case.want


def test_route_carries_exact_weights_3_to_1():
    xr = service(({"team": "a"}, 3), ({"team": "b"}, 1))
    rsp = run_with(xr, [endpoint("a1"), endpoint("a2")], [endpoint("b1")])
    assert {n: r["weight"] for n, r in refs(rsp).items()} == {"a1-backend": 3, "a2-backend": 3, "b1-backend": 2}
    assert status(rsp)["endpoints"] == [{"name": "a1", "weight": 3}, {"name": "a2", "weight": 3},
                                        {"name": "b1", "weight": 2}]


# ----- route shape -------------------------------------------------------------
def test_route_on_the_inference_gateway_with_prefix_and_address():
    rsp = run_with(service(), [endpoint("e1")])
    r = route(rsp)
    assert_valid(r)
    assert r["metadata"]["namespace"] == NS
    assert r["spec"]["parentRefs"] == [{"name": "modelplane", "namespace": "modelplane-system"}]
    rule = r["spec"]["rules"][0]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": f"/{NS}/{NAME}/"}}]
    assert refs(rsp)["e1-backend"]["group"] == "gateway.envoyproxy.io" and refs(rsp)["e1-backend"]["kind"] == "Backend"
    assert status(rsp)["address"] == f"http://203.0.113.1/{NS}/{NAME}"


def test_one_rewrite_path_is_applied_at_the_rule():
    rsp = run_with(service(), [endpoint("e1")])
    rule = route(rsp)["spec"]["rules"][0]
    assert rule["filters"][0]["urlRewrite"]["path"]["replacePrefixMatch"] == f"/{NS}/e1/"
    assert "filters" not in refs(rsp)["e1-backend"]


def test_different_rewrite_paths_use_the_prefix_header_per_backend():
    xr = service(({"modelplane.ai/deployment": "qwen3-32b-pd"}, 9), ({"provider": "together"}, 1))
    rsp = run_with(xr, [endpoint("pd-0"), endpoint("pd-1")], [endpoint("together", rewrite="/", credential=True)])
    assert_valid(route(rsp))
    rule = route(rsp)["spec"]["rules"][0]
    assert rule["filters"][0]["urlRewrite"]["path"]["replacePrefixMatch"] == "/"
    header = refs(rsp)["pd-0-backend"]["filters"][0]["requestHeaderModifier"]["set"][0]
    assert header == {"name": "x-modelplane-prefix", "value": f"/{NS}/pd-0/"}
    assert refs(rsp)["together-backend"]["filters"] == [{"type": "ExtensionRef", "extensionRef": {
        "group": "gateway.envoyproxy.io", "kind": "HTTPRouteFilter", "name": "together-credential"}}]
    assert {n: r["weight"] for n, r in refs(rsp).items()} == {"pd-0-backend": 9, "pd-1-backend": 9,
                                                             "together-backend": 2}


# ----- conditions, tenancy, nothing lost --------------------------------------
def test_selector_matching_nothing_is_named():
    xr = service(({"team": "a"}, 1), ({"modelplane.ai/deployment": "x"}, 1))
    rsp = run_with(xr, [endpoint("a1")], [])
    cond = conditions(rsp)["Routed"]
    assert cond.reason == "NoMatchingEndpoints"
    assert "spec.endpoints[1] {modelplane.ai/deployment: x} matches no ModelEndpoint in ml-team" in cond.message
    assert set(refs(rsp)) == {"a1-backend"}


def test_unrouted_endpoint_is_skipped_with_a_condition():
    rsp = run_with(service(), [endpoint("e1"), endpoint("e2", routed=False)])
    assert set(refs(rsp)) == {"e1-backend"}
    assert "e2 is not routed yet" in conditions(rsp)["Routed"].message


def test_requirements_carry_the_namespace():
    rsp = run_with(service(({"team": "a"}, 1)), [endpoint("a1")])
    sel = rsp.requirements.resources["endpoints-0"]
    assert sel.namespace == NS and dict(sel.match_labels.labels) == {"team": "a"}
    assert rsp.requirements.resources["gateway"].match_name == "default"


def test_endpoints_of_another_namespace_are_never_routed():
    rsp = run_with(service(), [endpoint("mine"), endpoint("theirs", ns="other-team")])
    assert set(refs(rsp)) == {"mine-backend"}


@pytest.mark.parametrize("gw,groups", [(None, None), ([gateway()], None), ([], [[endpoint("e1")]])],
                         ids=["nothing fetched", "endpoints not fetched", "no InferenceGateway"])
def test_inputs_missing_keep_the_observed_route(gw, groups):
    first = run_with(service(), [endpoint("e1")])
    observed = {ROUTE: route(first)}
    required = {} if gw is None else {"gateway": gw}
    for i, items in enumerate(groups or []):
        required[f"endpoints-{i}"] = items
    rsp = run(FN, request(service(), required=required, observed=observed))
    assert fatal(rsp) is None
    assert route(rsp) == observed[ROUTE]
    assert conditions(rsp)["InputsResolved"].reason == "WaitingForInputs"


def test_address_omitted_while_gateway_address_unknown():
    rsp = run_with(service(), [endpoint("e1")], gw=[gateway(address=None)])
    assert "address" not in status(rsp)


def test_deterministic_output():
    xr = service(({"team": "a"}, 3), ({"team": "b"}, 1))
    groups = ([endpoint("a2"), endpoint("a1")], [endpoint("b1")])
    one, two = run_with(xr, *groups), run_with(xr, *[list(reversed(g)) for g in groups])
    assert one.SerializeToString(deterministic=True) == two.SerializeToString(deterministic=True)


def test_real_grpc_subprocess():
    req = request(service(), required={"gateway": [gateway()], "endpoints-0": [endpoint("e1")]})
    with serve_process(FN, "--insecure") as address:
        rsp = call(address, req)
    assert set(refs(rsp)) == {"e1-backend"}
