"""A served function keeps nothing of a call once it has answered, even on the error paths that cache.

``make soak``'s table checks RSS after 500 and 5,000 fuzzed calls; these
look where fuzzed inputs rarely go: a content-keyed cache that stores an
exception. ``modelplane.cel.compile`` caches a selector's syntax error and
raises the cached object again; an exception keeps the traceback of where it
was last raised, so each cached error held on to the frames of the last call
that hit it, request and response included: up to ``CACHE_SIZE`` (2,048)
whole requests. Found by this test: 0.4 MB a call with a 200 kB request.
"""
from __future__ import annotations

import copy

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelplane.cel.adapter import CACHE_SIZE

from tests import support
from tests.reliability import fleet, soak
from tests.reliability.common import SOAK, report, require_function
from tests.reliability.procs import Server

DEPLOYMENT = "compose-model-deployment"
PAD = "p" * 200_000  # a large request (an annotation), so that holding one shows


def deployment_with(expr: str) -> dict:
    """The example ModelDeployment, its one device selector ``expr``, with a large annotation."""
    xr = copy.deepcopy(fleet.baseline(DEPLOYMENT))
    xr["spec"]["engines"][0]["members"][0]["nodeSelector"]["devices"][0]["selectors"] = [{"cel": expr}]
    xr["metadata"]["annotations"] = {"pad": PAD}
    return xr


# Valid selectors fill the compile cache (bounded by count) before RSS may settle; errors must not
# hold anything large, so their RSS is flat from the start.
CALLS = {"syntax error": (300, 1500), "valid": (CACHE_SIZE + 250, CACHE_SIZE + 1250)}


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(CALLS))
def test_distinct_selectors_leave_no_request_behind(kind):
    require_function(DEPLOYMENT)
    early_at, late_at = CALLS[kind] if SOAK else (60, 300)
    required = fleet.answer(fleet.converge(support.run, DEPLOYMENT, deployment_with("true")).requirements,
                            fleet.catalog())
    rss = {}
    with Server(DEPLOYMENT, "--insecure") as server, grpc.insecure_channel(server.address) as channel:
        run = grpcv1.FunctionRunnerServiceStub(channel).RunFunction
        for i in range(1, late_at + 1):
            expr = f'device.driver == "x{i}"' + (" &&" if kind == "syntax error" else "")
            rsp = run(support.request(deployment_with(expr), required=required), timeout=30)
            assert not (support.fatal(rsp) or "").startswith("internal error"), support.fatal(rsp)
            if i in (early_at, late_at):
                rss[i] = soak._status_mb(server.proc.pid, "VmRSS")
    report(f"served-memory-cel-{kind.replace(' ', '-')}", {"calls": [early_at, late_at], "rss_mb": list(rss.values())})
    early, late = rss[early_at], rss[late_at]
    assert not soak.rss_grew(early, late), f"RSS {early:.0f} MB after {early_at} calls, {late:.0f} MB after {late_at}"
