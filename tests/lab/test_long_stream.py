"""Issue 47, item 6: the pieces of the long-stream check that need no lab.

The lab check itself (a chat completion streamed for 25 s arrives whole through the lab's data
plane, and through Envoy given the route as composed, while Envoy cuts the route without its
timeouts) runs in ``tests/lab/test_traffic.py`` on the traffic fleet (``tests/lab/long_stream.py``),
so it adds one stream to ``make lab-test`` and no fleet of its own.
"""
from __future__ import annotations

import pytest
from modelplane.routing import service as S
from modelplane.routing.timeouts import REQUEST_TIMEOUT
from modelplane.workloads import replica as R

from tests.lab import envoy_judge as J
from tests.lab.long_stream import TOKEN_DELAY, TOKENS, Streamed

NS, SERVICE, CLUSTER = "ml-team", "long", "solo"


@pytest.mark.parametrize("timeouts,want", [
    ({"request": "1h"}, {"timeout": "3600s", "idle_timeout": "3600s"}),
    ({"request": "2h30m"}, {"timeout": "9000s", "idle_timeout": "9000s"}),   # idle follows a longer request
    ({"request": "90s"}, {"timeout": "90s", "idle_timeout": "3600s"}),       # and stays 1 h under it
    ({"request": "0s"}, {"timeout": "0s", "idle_timeout": "0s"}),            # both off
    (None, {}),                                                              # Envoy's defaults: 15 s
], ids=["1h", "2h30m", "90s", "0s", "none"])
def test_the_judge_sets_timeouts_as_envoy_gateway_does(timeouts, want):
    rule = {"matches": [{"path": {"type": "PathPrefix", "value": "/a/"}}], **({"timeouts": timeouts} if timeouts else {})}
    action = J.route_action(rule, "c")
    assert {k: v for k, v in action.items() if k.endswith("timeout")} == want


def test_every_composed_route_gives_envoy_a_timeout_longer_than_the_test_stream():
    ep = S.Endpoint("e", "e-backend", replica=S.Replica("r", CLUSTER, CLUSTER, ("gw", "gw-ns"),
                                                         ((("name", "r-engine"), ("port", 8000)),)))
    composed = [S.route(SERVICE, NS, {"name": "gw", "namespace": "gw-ns"}, [ep], {"e": 1}, {}),
                *(hop.manifest for hop in S.cluster_routes(SERVICE, NS, [ep], {"e": 1}, {})),
                R.route("r", NS, {"name": "gw", "namespace": "gw-ns"}, [{"name": "r-engine", "port": 8000}], {})]
    for r in composed:
        action = J.route_action(r["spec"]["rules"][0], "c")
        assert J.seconds(action["timeout"]) == J.seconds(REQUEST_TIMEOUT) > TOKENS * TOKEN_DELAY > 20


def test_a_stream_reads_complete_only_with_its_done_event():
    chunk = '{"choices": [{"delta": {"content": " word"}}]}'
    whole = Streamed(200, ['{"choices": [{"delta": {"role": "assistant", "content": ""}}]}', chunk, chunk, "[DONE]"])
    cut = Streamed(200, whole.events[:2], "IncompleteRead: IncompleteRead(0 bytes read)")
    assert (whole.complete, whole.tokens) == (True, 2)
    assert (cut.complete, cut.tokens) == (False, 1)
