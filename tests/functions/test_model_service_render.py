"""End to end: `modelplane render` of a ModelService with its inputs as extra resources."""
from __future__ import annotations

from modelplane.validate.upstream import assert_valid

from tests.functions.render import render
from tests.functions.services import endpoint, gateway, service


def test_render_service_with_extra_resources(tmp_path):
    xr = service(({"team": "a"}, 3), ({"team": "b"}, 1))
    a1, a2, b1 = (endpoint(n) for n in ("a1", "a2", "b1"))
    for e, team in ((a1, "a"), (a2, "a"), (b1, "b")):
        e["metadata"]["labels"] = {"team": team}
    docs = render(tmp_path, xr, "modelservices", [gateway(), a1, a2, b1])
    route = next(d for d in docs if d["kind"] == "HTTPRoute")
    assert_valid(route)
    weights = {r["name"]: r["weight"] for r in route["spec"]["rules"][0]["backendRefs"]}
    assert weights == {"a1-backend": 3, "a2-backend": 3, "b1-backend": 2}
    assert docs[0]["status"]["address"] == "http://203.0.113.1/ml-team/search"
