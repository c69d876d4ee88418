"""A workload cluster taken down whole under a steady client loop, over the lab's real data plane.

The ModelService ``chat`` splits 50/50 between a replica on ``solo`` and one on ``onprem-west``
(tests/lab/fleets/failover). ``lab.cluster_down("solo")`` stops solo's API server, its Traefik
and its engines. The control plane learns it only through what it really has: the calls of
``simulate --lab`` to solo's API server are refused, so its Objects go ``Synced=False`` with the
connect error (as provider-kubernetes reports them), the InferenceCluster goes NotReady and the
ModelService routes only to endpoints on clusters that are up. Until that reaches the
control-plane Traefik, the requests it sends to solo's gateway fail: the test counts them and
measures the time from the outage to full recovery (every request answered, by onprem-west).
After ``failover.after`` (10s) chat-solo's replica is replaced on onprem-west; then solo comes
back (``cluster_up``), goes Ready again, and the lab is left as the other tests expect it.

A failed request is a non-2xx answer, a reset, or no answer in 10 s; the client never retries.
The simulated clock follows the wall clock.
"""
from __future__ import annotations

import http.client
import io
import json
import shutil
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from modelplane.cli import lab as lab_cli
from modelplane.lab import cluster_down, cluster_up
from modelplane.lab.backend import LabPhysical
from modelplane.lab.remote import Remote
from modelplane.lab.state import LabState
from modelplane.render import FunctionPool
from modelplane.simulate.loop import load
from modelplane.validate.admission import load_dir

from tests.lab.lab_fleet import need_data_plane
from tests.lab.traffic_fleet import ANSWERED_BY, who

pytestmark = [pytest.mark.slow, pytest.mark.lab]

MODELS = Path(__file__).resolve().parent / "fleets" / "failover" / "models.yaml"
DOWN, UP = "solo", "onprem-west"
FAILOVER_AFTER = 10          # chat-solo's spec.failover.after, seconds
QUIET = 5.0                  # seconds of answers only from UP, and no failure, that count as recovered
SOLO = ("InferenceCluster", "", DOWN)
CHAT_SOLO = ("ModelDeployment", "ml-team", "chat-solo")


class Client(threading.Thread):
    """POSTs chat completions to ``url`` back to back until stopped; every result with its time."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.stop = threading.Event()
        self.results: list[tuple[float, str, dict[str, str]]] = []   # (monotonic time, failure or "", who)

    def run(self) -> None:
        parts = urlsplit(self.url)
        body = json.dumps({"model": "chat", "messages": [{"role": "user", "content": "hi"}]})
        while not self.stop.is_set():
            conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=10)
            try:
                conn.request("POST", parts.path, body, {"Content-Type": "application/json"})
                rsp = conn.getresponse()
                rsp.read()
                ok = rsp.status == 200
                self.results.append((time.monotonic(), "" if ok else str(rsp.status),
                                     who(rsp.getheader(ANSWERED_BY) or "") if ok else {}))
            except OSError as err:
                self.results.append((time.monotonic(), repr(err), {}))
            finally:
                conn.close()
            time.sleep(0.01)

    def since(self, t: float) -> list[tuple[float, str, dict[str, str]]]:
        return [r for r in list(self.results) if r[0] >= t]


class Clock:
    """Reconciles with the simulated clock following the wall clock; remembers how long a round took."""

    def __init__(self, sim) -> None:
        self.sim = sim
        self.wall = time.monotonic()
        self.longest = 0.0

    def step(self) -> None:
        time.sleep(0.5)
        ahead = time.monotonic() - self.wall
        if ahead >= 1:
            self.sim.advance(int(ahead))
            self.wall += int(ahead)
        t = time.monotonic()
        self.sim.run()
        self.longest = max(self.longest, time.monotonic() - t)

    def until(self, done, limit: float, what: str) -> None:
        deadline = time.monotonic() + limit
        while not done():
            assert time.monotonic() < deadline, f"{what}: not within {limit:.0f} s"
            self.step()


def _fleet(lab, target: Path) -> Path:
    xrs, _ = load_dir(Path(lab.directory))
    keep = [d for d in xrs if d.get("kind") == "InferenceClass"
            or (d.get("kind") == "InferenceCluster" and d["metadata"]["name"] in (DOWN, UP))]
    target.mkdir(parents=True, exist_ok=True)
    (target / "clusters.yaml").write_text(yaml.safe_dump_all(keep, sort_keys=False))
    shutil.copy(MODELS, target / "models.yaml")
    return target


def _cond(obj: dict, typ: str) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == typ), {})


@pytest.fixture(scope="module")
def running(lab, tmp_path_factory):
    need_data_plane(lab)
    pool = FunctionPool()
    sim = load(_fleet(lab, tmp_path_factory.mktemp("failover")), pool, physical=LabPhysical(Remote(lab)))
    try:
        assert sim.run().converged
        yield sim
    finally:
        sim.close()
        pool.close()


def test_a_cluster_taken_down_whole_fails_over_and_comes_back(running, lab):
    sim = running
    placed = sim.world.xrs[CHAT_SOLO].obj["status"]["placements"]
    assert [p["cluster"] for p in placed] == [DOWN], placed
    url = sim.world.xrs[("ModelService", "ml-team", "chat")].obj["status"]["address"] + "/v1/chat/completions"
    client = Client(url)
    client.start()
    clock = Clock(sim)
    try:
        clock.until(lambda: {r[2].get("cluster") for r in client.since(time.monotonic() - 2)} == {DOWN, UP},
                    30, "answers from both clusters")
        t0 = time.monotonic()
        stopped = cluster_down(DOWN, lab.root)
        assert f"{DOWN}/kube-apiserver" in stopped and f"{DOWN}/traefik" in stopped, stopped
        down_took = time.monotonic() - t0

        def recovered() -> bool:
            tail = client.since(time.monotonic() - QUIET)
            return (time.monotonic() - t0 > QUIET and len(tail) > 10
                    and all(not fail and answer.get("cluster") == UP for _, fail, answer in tail))
        clock.until(recovered, 60, "the service answering from onprem-west alone")
        after = client.since(t0)
        bad = [(t, f or a.get("cluster")) for t, f, a in after if f or a.get("cluster") != UP]
        recovery = (bad[-1][0] - t0) if bad else 0.0
        failed = [f for _, f, _ in after if f]
        print(f"\nfailover: cluster {DOWN} down in {down_took:.1f} s; {len(failed)} failed requests of "
              f"{len(after)} after the outage; outage -> full recovery {recovery:.1f} s "
              f"(longest reconcile round {clock.longest:.1f} s); failures: {sorted(set(failed))}")

        # What the control plane saw: only what an unreachable cluster shows.
        ready = _cond(sim.world.xrs[SOLO].obj, "Ready")
        assert ready.get("status") == "False", ready
        objects = [o for k, s in sim.world.xrs.items() if k[0] == "ModelReplica"
                   for o in s.composed.values()
                   if o["kind"] == "Object" and o["spec"]["providerConfigRef"]["name"] == DOWN
                   # The engine report's Observe-only Object observed nothing before the outage (no
                   # engine observer runs in the lab), so it has no last status to keep.
                   and o["spec"].get("managementPolicies") != ["Observe"]]
        assert objects
        for obj in objects:
            synced = _cond(obj, "Synced")
            assert synced["status"] == "False" and synced["message"].startswith(
                f"cannot connect: lab cluster {DOWN} does not answer at ") and "refused" in synced["message"], synced
            assert (obj["status"].get("atProvider") or {}).get("manifest"), obj["metadata"]["name"]  # last status kept
        assert all(not f for t, f, _ in client.results if t < t0)   # nothing failed before the outage
        # The bound. A request fails only while the control-plane gateway still routes to solo: from
        # the outage until the next reconcile round syncs solo (its objects go Synced=False, so the
        # InferenceCluster renders NotReady), the round after it renders the ModelService without solo's
        # endpoint, and Traefik reprograms (0.06 s measured, see issue 32). A round starts at most
        # 0.5 s (the clock's step) after the last one ended: 2 rounds of (0.5 s + the longest round)
        # plus cluster_down's own time and 2 s for the data plane. failover.after plays no part:
        # endpoints on a NotReady cluster leave routing at once; it only delays the replacement.
        bound = down_took + 2 * (0.5 + clock.longest) + 2.0
        assert recovery <= bound, (recovery, bound)

        # `lab status` shows a cluster taken down, not a broken lab; simulate --lab still opens it.
        out, err = io.StringIO(), io.StringIO()
        assert lab_cli.run(["status", "--state", lab.root], out, err) == 0, err.getvalue()
        rows = {line.split()[0]: line.split()[2] for line in out.getvalue().splitlines()[2:] if line.strip()}
        assert rows[f"{DOWN}/kube-apiserver"] == rows[f"{DOWN}/traefik"] == "down", out.getvalue()
        assert rows[f"{UP}/kube-apiserver"] == rows[f"{DOWN}/kwok"] == "yes", out.getvalue()
        assert f"cluster {DOWN} is down since " in out.getvalue()
        assert Remote.load(Path(lab.root)).state.outages.keys() == {DOWN}

        # After failover.after, chat-solo's replica is replaced on onprem-west and answers there.
        clock.until(lambda: any(a.get("deployment") == "chat-solo" and a.get("cluster") == UP
                                for _, _, a in client.since(time.monotonic() - 2)),
                    FAILOVER_AFTER + 60, "chat-solo answering from its replacement on onprem-west")
        assert time.monotonic() - t0 >= FAILOVER_AFTER
        replaced = client.since(t0 + recovery + 0.5)
        assert [f for _, f, _ in replaced if f] == []
        print(f"failover: chat-solo's replacement answers from {UP} {time.monotonic() - t0:.1f} s after the outage")
    finally:
        if DOWN in LabState.load(Path(lab.root)).outages:
            cluster_up(DOWN, lab.root)
        # The session's lab object follows the state file: solo's API server and Traefik have new pids.
        lab.components[:] = LabState.load(Path(lab.root)).components
    # Back: solo answers its API calls again, goes Ready, the surplus replica drains away.
    t1 = time.monotonic()
    clock.until(lambda: _cond(sim.world.xrs[SOLO].obj, "Ready").get("status") == "True", 60, f"{DOWN} Ready again")
    clock.until(lambda: len(sim.world.xrs[CHAT_SOLO].obj["status"].get("placements") or []) == 1
                and not sim.world.xrs[CHAT_SOLO].obj["status"].get("removals"), 60, "the surplus replica removed")
    client.stop.set()
    client.join(15)
    back = client.since(t1)
    assert back and [f for _, f, _ in back if f] == [], [f for _, f, _ in back if f][:5]
    print(f"failover: {DOWN} Ready again {time.monotonic() - t1:.1f} s after cluster_up returned; "
          f"{len(back)} requests since, none failed")
