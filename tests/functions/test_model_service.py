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
    # An in-fleet endpoint is a Service (group and kind implicit, as Gateway API spells it).
    assert refs(rsp)["e1-backend"] == {"name": "e1-backend", "port": 80, "weight": 1}
    external = refs(run_with(service(), [endpoint("x", cluster=None)]))["x-backend"]
    assert external["group"] == "gateway.envoyproxy.io" and external["kind"] == "Backend"
    assert status(rsp)["address"] == f"http://203.0.113.1/{NS}/{NAME}"


def test_external_endpoints_alone_are_rewritten_to_their_path_without_the_service_header():
    rsp = run_with(service(), [endpoint("e1", rewrite="/openai/", cluster=None)])
    rule = route(rsp)["spec"]["rules"][0]
    assert rule["filters"] == [{"type": "URLRewrite", "urlRewrite": {
        "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/openai/"}}}]
    assert "filters" not in refs(rsp)["e1-backend"]
    assert not [k for k in desired(rsp) if k.startswith("route-")]


def cluster_route(rsp, cluster: str) -> dict:
    return desired(rsp)[f"route-{cluster}"]["spec"]["forProvider"]["manifest"]


def test_two_hops_control_plane_splits_by_endpoint_each_cluster_among_its_replicas():
    xr = service(({"modelplane.ai/deployment": "qwen3-32b-pd"}, 9), ({"provider": "together"}, 1))
    pd = [endpoint("pd-0", cluster="prod-a"), endpoint("pd-1", cluster="prod-b"), endpoint("pd-2", cluster="prod-a")]
    rsp = run_with(xr, pd, [endpoint("together", credential=True, cluster=None)])
    assert_valid(route(rsp))
    rule = route(rsp)["spec"]["rules"][0]
    # Rule-level filters only (Core + Extended path rewrite): no per-backendRef header.
    assert rule["filters"] == [
        {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}},
        {"type": "RequestHeaderModifier", "requestHeaderModifier": {
            "set": [{"name": "x-modelplane-service", "value": f"{NS}/{NAME}"}]}}]
    assert refs(rsp)["pd-0-backend"] == {"name": "pd-0-backend", "port": 80, "weight": 3}
    assert refs(rsp)["together-backend"]["filters"] == [{"type": "ExtensionRef", "extensionRef": {
        "group": "gateway.envoyproxy.io", "kind": "HTTPRouteFilter", "name": "together-credential"}}]
    assert {n: r["weight"] for n, r in refs(rsp).items()} == {
        "pd-0-backend": 3, "pd-1-backend": 3, "pd-2-backend": 3, "together-backend": 1}
    a, b = cluster_route(rsp, "prod-a"), cluster_route(rsp, "prod-b")
    for obj in (a, b, desired(rsp)["route-prod-a"]):
        assert_valid(obj)
    assert desired(rsp)["route-prod-a"]["spec"]["providerConfigRef"]["name"] == "prod-a"
    assert a["spec"]["parentRefs"] == [{"name": "modelplane", "namespace": "modelplane-system"}]
    assert a["spec"]["rules"] == [{
        "matches": [{"path": {"type": "PathPrefix", "value": "/"},
                     "headers": [{"type": "Exact", "name": "x-modelplane-service", "value": f"{NS}/{NAME}"}]}],
        "backendRefs": [{"name": "pd-0-engine", "port": 8000, "weight": 1},
                        {"name": "pd-2-engine", "port": 8000, "weight": 1}],
        "timeouts": {"request": "1h"}}]
    assert [r["name"] for r in b["spec"]["rules"][0]["backendRefs"]] == ["pd-1-engine"]
    # The routes on workload clusters hold their provider configs like every remote Object.
    assert [k for k in desired(rsp) if k.startswith("usage-")]


def test_cluster_route_splits_a_replica_share_among_its_engines_by_weight():
    pools = [{"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "a-prefill", "weight": 1},
             {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "a-decode", "weight": 3}]
    rsp = run_with(service(), [endpoint("a", refs=pools), endpoint("b")])
    got = {r["name"]: r["weight"] for r in cluster_route(rsp, "prod-a")["spec"]["rules"][0]["backendRefs"]}
    assert got == {"a-prefill": 1, "a-decode": 3, "b-engine": 4}


def test_a_cluster_no_longer_hosting_a_selected_replica_loses_its_route():
    first = run_with(service(), [endpoint("e1", cluster="prod-a"), endpoint("e2", cluster="prod-b")])
    observed = desired(first)
    rsp = run_with(service(), [endpoint("e1", cluster="prod-a")], observed=observed)
    assert "route-prod-a" in desired(rsp) and "route-prod-b" not in desired(rsp)


def test_endpoint_whose_replica_published_no_backends_waits():
    rsp = run_with(service(), [endpoint("e1"), endpoint("e2", refs=[])])
    assert set(refs(rsp)) == {"e1-backend"}
    assert "ModelEndpoint e2 has no backends on cluster prod-a yet" in conditions(rsp)["Routed"].message


def test_rewrite_paths_that_differ_route_the_larger_share_and_name_the_rest():
    xr = service(({"modelplane.ai/deployment": "qwen3-32b-pd"}, 9), ({"provider": "together"}, 1))
    rsp = run_with(xr, [endpoint("pd-0")], [endpoint("together", rewrite="/v1/", cluster=None)])
    assert set(refs(rsp)) == {"pd-0-backend"}
    msg = conditions(rsp)["Routed"].message
    assert "together (rewritePath /v1/) is left out" in msg and "give it rewritePath /" in msg


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


# ----- draining: out of routing, and what the observed routes carry ----------------------
def out_of_routing(e: dict) -> dict:
    e["metadata"]["annotations"] = {"modelplane.ai/out-of-routing": "draining: Removed: scaled down to 1"}
    return e


def test_an_endpoint_taken_out_of_routing_leaves_both_hops_without_a_warning():
    rsp = run_with(service(), [endpoint("e1"), out_of_routing(endpoint("e2", cluster="prod-b"))])
    assert set(refs(rsp)) == {"e1-backend"}
    assert "route-prod-b" not in desired(rsp)
    assert conditions(rsp)["Routed"].status == 2   # True: leaving on purpose is not a fault


def test_routed_backends_report_the_observed_routes_not_the_desired_ones():
    both = desired(run_with(service(), [endpoint("e1"), endpoint("e2")]))
    # Next call: e2 is out; the routes observed still carry it (applied before this call).
    rsp = run_with(service(), [endpoint("e1"), out_of_routing(endpoint("e2"))], observed=both)
    assert status(rsp)["routedBackends"] == ["e1-backend", "e1-engine", "e2-backend", "e2-engine"]
    assert set(refs(rsp)) == {"e1-backend"}
    # Once the cluster reports the new route too, only e1 is carried.
    applied = desired(rsp)
    applied["route-prod-a"]["status"] = {"atProvider": {"manifest": applied["route-prod-a"]["spec"]["forProvider"]
                                                        ["manifest"]}}
    rsp = run_with(service(), [endpoint("e1"), out_of_routing(endpoint("e2"))], observed=applied)
    assert status(rsp)["routedBackends"] == ["e1-backend", "e1-engine"]


def test_a_cluster_route_the_cluster_still_reports_with_a_replica_keeps_it_carried():
    both = desired(run_with(service(), [endpoint("e1"), endpoint("e2")]))
    stale = desired(run_with(service(), [endpoint("e1")]))
    stale["route-prod-a"]["status"] = {"atProvider": {"manifest": both["route-prod-a"]["spec"]["forProvider"]
                                                      ["manifest"]}}
    rsp = run_with(service(), [endpoint("e1")], observed=stale)
    assert "e2-engine" in status(rsp)["routedBackends"]


def test_every_endpoint_leaving_replaces_the_route_with_an_empty_one_so_the_drain_can_finish():
    first = desired(run_with(service(), [endpoint("e1")]))
    rsp = run_with(service(), [out_of_routing(endpoint("e1"))], observed=first)
    assert "backendRefs" not in route(rsp)["spec"]["rules"][0]
    assert "route-prod-a" not in desired(rsp)
