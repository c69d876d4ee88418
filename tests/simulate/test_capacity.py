"""`simulate --show capacity`: what really runs, and what a wrong placement looks like (through the functions)."""
from __future__ import annotations

import io

import pytest
from modelplane.cli import simulate as simulate_cli
from modelplane.render import FunctionPool
from modelplane.simulate import report
from modelplane.simulate.loop import simulate

from tests.simulate import fleets


@pytest.fixture(scope="module")
def pool():
    with FunctionPool() as p:
        yield p


def test_a_class_whose_devices_the_claim_rejects_shows_pending_pods_and_nothing_ready(pool, tmp_path):
    """The fleet scheduler reads a class that promises 80Gi GPUs; the nodes really carry 24Gi ones."""
    d = fleets.write(tmp_path / "f", fleets.gpu_class("h100-8x"), fleets.existing_cluster("solo", [("gpu", "h100-8x", 1)]),
                     fleets.gateway(), fleets.deployment("big", copies=2))
    real = fleets.gpu_class("h100-8x", memory="24Gi")["spec"]
    world, outcome, sim = simulate(d, pool=pool, hardware={"h100-8x": real})
    assert outcome.converged, outcome.still_changing
    md = world.xrs[("ModelDeployment", "ml-team", "big")].obj["status"]
    assert [p["cluster"] for p in md["placements"]] == ["solo"]   # the scheduler believed the class
    assert md["replicas"]["ready"] == 0
    replica = world.xrs[("ModelReplica", "ml-team", "big-0-solo")].obj
    assert not any(c["type"] == "Ready" and c["status"] == "True" for c in replica["status"]["conditions"])
    lines = report.capacity(sim.physical)
    assert lines[:2] == ["CLUSTER  POOL  DEVICES USED", "solo     gpu   0/8"]
    pending = [line for line in lines if line.startswith("solo  ") and "Deployment/ml-team/big-0-solo-engine" in line]
    assert len(pending) == 2
    assert all("1 wanted, 0 of 8 free match; others: selector 1 false" in line for line in pending)


def test_cli_shows_capacity_and_refuses_a_hardware_file_without_classes(tmp_path):
    d = fleets.write(tmp_path / "f", fleets.gpu_class("h100-8x"), fleets.existing_cluster("solo", [("gpu", "h100-8x", 1)]),
                     fleets.gateway(), fleets.deployment("small", copies=3))
    out, err = io.StringIO(), io.StringIO()
    assert simulate_cli.run([str(d), "--show", "capacity"], stdout=out, stderr=err) == 0, err.getvalue()
    assert out.getvalue().splitlines()[1:] == ["", "CLUSTER  POOL  DEVICES USED", "solo     gpu   3/8", "",
                                               "No Pending pods."]
    empty = fleets.write(tmp_path / "hw", fleets.gateway(), name="hw.yaml") / "hw.yaml"
    assert simulate_cli.run([str(d), "--hardware", str(empty)], stdout=out, stderr=err) == 1
    assert "--hardware: " in err.getvalue() and "holds no InferenceClass" in err.getvalue()
