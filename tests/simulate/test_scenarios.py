"""Scenarios (issue 15): the example scenario files played through the real functions, round by round."""
from __future__ import annotations

import io
import json

import pytest
from modelplane import paths
from modelplane.cli import simulate as simulate_cli
from modelplane.errors import InputError
from modelplane.render import FunctionPool
from modelplane.simulate import scenario
from modelplane.simulate.loop import load

SCENARIOS = paths.EXAMPLES / "scenarios"


@pytest.fixture(scope="module")
def pool():
    with FunctionPool() as p:
        yield p


def play(pool, fleet: str, name: str):
    """Load the fleet, play the scenario; the timeline (one entry per round) and the simulator."""
    rounds: list[dict] = []
    current: list[scenario.Step | None] = [None]
    sim = load(SCENARIOS / fleet, pool, on_round=lambda s, _: rounds.append(scenario.timeline(s, current[0])))
    try:
        assert sim.run(max_rounds=100).converged
        runner = scenario.Runner(sim, SCENARIOS, on_step=lambda step: current.__setitem__(0, step))
        runner.play(scenario.parse(SCENARIOS / name))
        assert runner.unsettled == []
    finally:
        sim.close()
    return rounds, sim


def replicas(sim) -> dict[str, str]:
    """ModelReplica name -> its revision label."""
    return {k[2]: s.obj["metadata"]["labels"].get("modelplane.ai/revision", "") for k, s in sim.world.xrs.items()
            if k[0] == "ModelReplica"}


def deployment(sim) -> dict:
    return sim.world.xrs[("ModelDeployment", "ml-team", "chat")].obj["status"]


def test_a_rolling_update_keeps_three_routed_ready_endpoints_at_every_round(pool):
    rounds, sim = play(pool, "fleet", "rolling-update.scenario")
    during = [r for r in rounds if r["step"] is not None]
    assert len(during) > 3
    assert min(r["services"]["ml-team/chat"] for r in during) >= 3
    assert any(r["deployments"]["ml-team/chat"]["updated"] < 3 for r in during)   # it did roll, in steps
    status = deployment(sim)
    assert set(replicas(sim).values()) == {status["revision"]} and len(replicas(sim)) == 3
    assert status["replicas"]["updated"] == 3 and status["replicas"]["ready"] == 3


def test_with_no_spare_capacity_max_unavailable_1_never_drops_below_two(pool):
    rounds, sim = play(pool, "full-fleet", "no-spare-capacity.scenario")
    during = [r["services"]["ml-team/chat"] for r in rounds if r["step"] is not None]
    assert min(during) == 2   # one replica at a time is replaced, never more
    assert set(replicas(sim).values()) == {deployment(sim)["revision"]} and len(replicas(sim)) == 3


def test_a_rollout_stuck_on_capacity_says_so_and_keeps_serving(pool):
    rounds, sim = play(pool, "full-fleet", "stuck-rollout.scenario")
    progressing = next(c for c in deployment(sim)["conditions"] if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "InsufficientCapacity")
    assert "maxUnavailable 0" in progressing["message"]
    assert rounds[-1]["services"]["ml-team/chat"] == 3
    assert deployment(sim)["revision"] not in set(replicas(sim).values())


def test_a_cluster_down_for_six_minutes_fails_over_and_its_return_removes_the_surplus(pool):
    rounds, sim = play(pool, "fleet", "failover.scenario")
    down = [r for r in rounds if r["step"] in (0, 1)]
    assert min(r["services"]["ml-team/chat"] for r in down) >= 1   # the others keep serving
    # Replacements come once the cluster has been down for failover.after (5m), not before.
    replaced = [r for r in down if r["deployments"]["ml-team/chat"]["ready"] > 3]
    assert replaced and replaced[0]["clock"] == "2026-01-01T00:05:06Z"
    assert max(r["services"]["ml-team/chat"] for r in down if r["clock"] >= "2026-01-01T00:05:06Z") == 3
    # Back at 6m06s: the surplus leaves routing at once and is deleted after its drain period (60s).
    back = [r for r in rounds if r["step"] == 3]
    assert back and all(r["services"]["ml-team/chat"] == 3 for r in back)
    assert max(r["clock"] for r in rounds) == "2026-01-01T00:08:06Z"
    # Back: the surplus goes, three replicas remain, all routed.
    assert len(replicas(sim)) == 3 and rounds[-1]["services"]["ml-team/chat"] == 3
    assert rounds[-1]["deployments"]["ml-team/chat"] == {"ready": 3, "desired": 3, "updated": 3}


def test_cli_prints_the_timeline_as_json_lines(tmp_path):
    (tmp_path / "s.scenario").write_text("steps:\n- advance: 90s\n- settle: {}\n")
    out, err = io.StringIO(), io.StringIO()
    code = simulate_cli.run([str(SCENARIOS / "fleet"), "--scenario", str(tmp_path / "s.scenario"),
                             "--show", "timeline", "-o", "json"], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["round"] for line in lines] == list(range(1, len(lines) + 1))
    assert lines[0]["action"] == "load" and lines[-1]["action"] == "settle"
    assert lines[-1]["clock"] == "2026-01-01T00:01:36Z"   # loaded at 00:00:06, then 90 s
    assert lines[-1]["deployments"] == {"ml-team/chat": {"ready": 3, "desired": 3, "updated": 3}}
    assert set(lines[-1]) == {"clock", "round", "step", "action", "deployments", "services"}


@pytest.mark.parametrize(("text", "field", "fix"), [
    ("steps: []", "steps", "non-empty list"),
    ("steps: [{advance: 5 minutes}]", "steps[0].advance", "like 90s, 5m or 1h30m"),
    ("steps: [{apply: nope.yaml, settle: {}}]", "steps[0]", "exactly one of"),
    ("steps: [{delete: {kind: Deployment, name: x}}]", "steps[0].delete.kind", "not a Modelplane kind"),
    ("steps: [{cluster: {name: east}}]", "steps[0].cluster", "ready: true|false"),
    ("steps: [{apply: missing.yaml}]", "steps[0].apply", "does not exist"),
])
def test_bad_scenarios_name_the_field_and_the_fix(tmp_path, text, field, fix):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        scenario.parse(path)
    assert err.value.field == field and fix in err.value.message


def test_durations():
    assert [scenario.duration(t, "f") for t in ("90s", "5m", "1h30m", "2m30s")] == [90, 300, 5400, 150]
    assert scenario.seconds_text(5400) == "1h30m"
