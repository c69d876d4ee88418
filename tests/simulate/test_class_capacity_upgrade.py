"""Changing a class's capacity under a running fleet (issue 47), played through the real functions.

The fleet (examples/scenarios/class-capacity) runs ``chat``, two 1-GPU replicas selecting
``memory >= 80Gi`` on an H100 class that says ``80Gi``. The corrected class says what NVIDIA's
DRA driver publishes, ``81559Mi``: less than the selector asks. The scenarios under
docs/manifests/platform/upgrade take the fleet there in either order:

- class first: chat's replicas stay Ready and routed, nothing is evicted, no pod restarts, and
  the deployment's Scheduled condition names the selector; the selector edited to the margin
  afterwards is a new revision that rolls as any other and clears the report;
- selectors first: the selector's revision rolls; then the class step moves nothing.
"""
from __future__ import annotations

import pytest
from modelplane import paths
from modelplane.render import FunctionPool
from modelplane.simulate import scenario
from modelplane.simulate.loop import load

FLEET = paths.EXAMPLES / "scenarios" / "class-capacity"
SCENARIOS = paths.ROOT / "docs" / "manifests" / "platform" / "upgrade"
CHAT = ("ModelDeployment", "ml-team", "chat")
CLASS_STEP = "apply class-capacity/class-h100-80gb-8x.yaml"


@pytest.fixture(scope="module")
def pool():
    with FunctionPool() as p:
        yield p


class Played:
    """A scenario played on the fleet, with what each round looked like."""

    def __init__(self, pool: FunctionPool, name: str) -> None:
        self.rounds: list[dict] = []
        self.step: list[scenario.Step | None] = [None]
        self.sim = load(FLEET, pool, on_round=lambda s, _: self.rounds.append(self._observe(s)))
        try:
            assert self.sim.run(max_rounds=100).converged
            self.start = self._observe(self.sim)
            runner = scenario.Runner(self.sim, SCENARIOS, on_step=lambda step: self.step.__setitem__(0, step))
            runner.play(scenario.parse(SCENARIOS / name))
            assert runner.unsettled == []
            self.end = self._observe(self.sim)
        finally:
            self.sim.close()

    def _observe(self, sim) -> dict:
        entry = scenario.timeline(sim, self.step[0])
        status = sim.world.xrs[CHAT].obj.get("status") or {}
        entry["scheduled"] = next((c.get("message", "") for c in status.get("conditions") or []
                                   if c.get("type") == "Scheduled"), "")
        entry["removals"] = [(r["name"], r["cause"]) for r in status.get("removals") or []]
        entry["replicas"] = sorted(k[2] for k in sim.world.xrs if k[0] == "ModelReplica")
        entry["revision"] = status.get("revision", "")
        east = sim.physical.clusters.get("east")
        # A pod that restarts is a new pod (a new creation number), even on the same node.
        # Engine pods only: the cluster's engine observer (modelplane-system) runs beside them.
        entry["pods"] = sorted((p.name, p.seq, p.node, p.devices) for p in east.pods()
                               if p.bound and not p.name.startswith("modelplane-engine-observer")) if east else []
        return entry

    def during(self, action: str) -> list[dict]:
        return [r for r in self.rounds if r["action"] == action]


def test_the_class_corrected_first_holds_the_running_replicas_and_names_the_selector(pool):
    played = Played(pool, "class-first.scenario")
    start, end = played.start, played.end
    assert start["deployments"]["ml-team/chat"] == {"ready": 2, "desired": 2, "updated": 2}
    assert "held" not in start["scheduled"]
    rounds = played.during(CLASS_STEP)
    assert rounds, "the class step reconciled nothing"
    for r in rounds:
        assert r["deployments"]["ml-team/chat"] == {"ready": 2, "desired": 2, "updated": 2}
        assert r["services"]["ml-team/chat"] == 2
        assert r["removals"] == []
        assert (r["replicas"], r["pods"]) == (start["replicas"], start["pods"])
    assert len(start["pods"]) == 2
    assert end["scheduled"] == (
        "2/2 replicas placed; replicas 0, 1 held on east (pool h100 of class h100-80gb-8x no longer matches "
        'request "gpu" (device gpu: selector 1 false: device.capacity["gpu.nvidia.com"].memory.compareTo('
        'quantity("80Gi")) >= 0); it keeps running on the devices it holds, new replicas are not placed there: '
        "update the selector or the class)")


def test_then_the_selector_at_the_margin_rolls_as_a_new_revision_and_clears_the_report(pool):
    played = Played(pool, "class-then-selector.scenario")
    after_class = played.during(CLASS_STEP)[-1]
    assert "held on east" in after_class["scheduled"]
    rolling = played.during("apply class-capacity/chat.yaml") + played.during("advance 3m")
    # What rolls: every replica, one at a time (maxSurge 1, maxUnavailable 0), never below two
    # routed ready endpoints; the report clears as soon as no replica of the old revision counts.
    assert min(r["services"]["ml-team/chat"] for r in rolling) >= 2
    assert min(r["deployments"]["ml-team/chat"]["ready"] for r in rolling) >= 2
    assert any(r["deployments"]["ml-team/chat"]["updated"] < 2 for r in rolling)
    end = played.end
    assert end["revision"] != played.start["revision"]
    assert end["scheduled"] == "2/2 replicas placed"
    assert set(end["replicas"]).isdisjoint(played.start["replicas"])
    assert not set(end["pods"]) & set(played.start["pods"])


def test_the_selector_edited_first_then_the_class_moves_nothing(pool):
    played = Played(pool, "selectors-first.scenario")
    before_class = played.during("advance 3m")[-1]
    assert before_class["scheduled"] == "2/2 replicas placed"
    rounds = played.during(CLASS_STEP)
    assert rounds
    for r in rounds:
        assert r["deployments"]["ml-team/chat"] == {"ready": 2, "desired": 2, "updated": 2}
        assert r["services"]["ml-team/chat"] == 2
        assert r["removals"] == [] and r["scheduled"] == "2/2 replicas placed"
        assert (r["replicas"], r["pods"], r["revision"]) == (
            before_class["replicas"], before_class["pods"], before_class["revision"])
