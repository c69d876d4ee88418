"""Changes under a steady client loop, over the lab's real data plane: no request fails.

A failed request is a non-2xx answer, a reset, or no answer in 10 s; the client never retries.
The simulated clock follows the wall clock (``advance`` one second per second) so each replica's
drain period (2s in the traffic fleet) really elapses while the data plane reprograms.
"""
from __future__ import annotations

import collections
import copy
import http.client
import json
import threading
import time
from urllib.parse import urlsplit

import pytest
from modelplane.lab.backend import LabPhysical
from modelplane.lab.remote import Remote
from modelplane.render import FunctionPool
from modelplane.simulate.loop import load
from modelplane.validate.admission import admitted

from tests.lab.lab_fleet import need_data_plane
from tests.lab.traffic_fleet import ANSWERED_BY, who
from tests.lab.traffic_fleet import fleet as _fleet

pytestmark = [pytest.mark.slow, pytest.mark.lab]

KEY_A = ("ModelDeployment", "ml-team", "chat-a")


class Client(threading.Thread):
    """POSTs chat completions to ``url`` back to back until stopped; counts who answered."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.stop = threading.Event()
        self.answers: list[dict[str, str]] = []
        self.failures: list[str] = []

    def run(self) -> None:
        parts = urlsplit(self.url)
        body = json.dumps({"model": "chat", "messages": [{"role": "user", "content": "hi"}]})
        while not self.stop.is_set():
            conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=10)
            try:
                conn.request("POST", parts.path, body, {"Content-Type": "application/json"})
                rsp = conn.getresponse()
                rsp.read()
                if rsp.status != 200:
                    self.failures.append(f"{rsp.status}")
                else:
                    self.answers.append(who(rsp.getheader(ANSWERED_BY) or ""))
            except OSError as err:
                self.failures.append(repr(err))
            finally:
                conn.close()


def _settle(sim, until, limit: float = 120.0) -> None:
    """Reconcile, letting the simulated clock follow the wall clock, until ``until()`` holds."""
    deadline = time.monotonic() + limit
    sim.run()
    while not until():
        assert time.monotonic() < deadline, "the fleet did not settle in time"
        time.sleep(1)
        sim.advance(1)
        sim.run()


def _removals(sim) -> list:
    return [r for k, s in sim.world.xrs.items() if k[0] == "ModelDeployment"
            for r in (s.obj.get("status") or {}).get("removals") or []]


@pytest.fixture(scope="module")
def running(lab, tmp_path_factory):
    need_data_plane(lab)
    directory = _fleet(lab, tmp_path_factory.mktemp("traffic-changes"))
    pool = FunctionPool()
    sim = load(directory, pool, physical=LabPhysical(Remote(lab)))
    try:
        assert sim.run().converged
        yield sim
    finally:
        sim.close()
        pool.close()


def _url(sim) -> str:
    return sim.world.xrs[("ModelService", "ml-team", "chat")].obj["status"]["address"] + "/v1/chat/completions"


def _apply(sim, key, change) -> None:
    xr = copy.deepcopy(sim.world.xrs[key].obj)
    for k in ("status", ):
        xr.pop(k, None)
    change(xr["spec"])
    sim.world.apply(admitted(xr))


def _serving(sim, key, count: int) -> bool:
    """``count`` replicas placed, every one Ready, nothing leaving."""
    st = sim.world.xrs[key].obj.get("status") or {}
    return (not _removals(sim) and len(st.get("placements") or []) == count
            and (st.get("replicas") or {}).get("ready") == count)


def test_scale_down_under_load_fails_no_request_and_the_replica_stops_answering(running):
    sim = running
    _apply(sim, KEY_A, lambda spec: spec.update(replicas=3))      # the 3 -> 1
    _settle(sim, lambda: _serving(sim, KEY_A, 3))
    client = Client(_url(sim))
    client.start()
    time.sleep(1)
    first = {a["replica"] for a in client.answers if a["deployment"] == "chat-a"}
    assert len(first) >= 2, first    # the loop reaches more than one of the three before the change
    _apply(sim, KEY_A, lambda spec: spec.update(replicas=1))
    _settle(sim, lambda: not _removals(sim) and len(
        sim.world.xrs[KEY_A].obj["status"].get("placements") or []) == 1)
    time.sleep(1)
    client.stop.set()
    client.join(15)
    assert client.failures == [], client.failures[:5]
    assert len(client.answers) > 50
    left = {p["index"] for p in sim.world.xrs[KEY_A].obj["status"]["placements"]}
    tail = client.answers[-20:]
    assert {a["replica"] for a in tail if a["deployment"] == "chat-a"} <= {str(i) for i in left}


def test_a_rolling_update_under_load_fails_no_request_and_answers_move_to_the_new_revision(running):
    sim = running
    old = sim.world.xrs[KEY_A].obj["status"]["revision"]
    client = Client(_url(sim))
    client.start()
    time.sleep(1)
    _apply(sim, KEY_A, lambda spec: spec["engines"][0]["members"][0]["template"]["spec"]["containers"][0][
        "args"].append("--max-model-len=4096"))
    new = None

    def done() -> bool:
        nonlocal new
        st = sim.world.xrs[KEY_A].obj.get("status") or {}
        new = st.get("revision")
        return new != old and not _removals(sim) and (st.get("replicas") or {}).get("updated") == 1
    _settle(sim, done, limit=180)
    time.sleep(2)
    client.stop.set()
    client.join(15)
    assert client.failures == [], client.failures[:5]
    # Answers move from the old revision's engines to the new: none of the pods that answered
    # first answers last (the pods carry no revision; their names are new).
    pods = [a["pod"] for a in client.answers if a["deployment"] == "chat-a"]
    assert pods[:5] and pods[-10:] and not set(pods[:5]) & set(pods[-10:]), (pods[:5], pods[-10:])
    assert collections.Counter(a["deployment"] for a in client.answers)["chat-b"] > 0
