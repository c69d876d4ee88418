"""The simulated API server and the statuses a healthy fleet reports."""
from __future__ import annotations

from modelplane.simulate import health
from modelplane.simulate.world import World


def _xr(kind: str, name: str, ns: str = "", **spec) -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


def test_apply_assigns_uid_and_creation_time_in_order_and_keeps_them_on_update():
    world = World()
    a = world.apply(_xr("ModelDeployment", "a", "ns", replicas=1))
    b = world.apply(_xr("ModelDeployment", "b", "ns", replicas=1))
    first = dict(world.xrs[a].obj["metadata"])
    assert first["creationTimestamp"] < world.xrs[b].obj["metadata"]["creationTimestamp"]
    world.xrs[a].obj["status"] = {"replicas": {"desired": 1}}
    world.apply(_xr("ModelDeployment", "a", "ns", replicas=3))
    obj = world.xrs[a].obj
    assert obj["metadata"]["uid"] == first["uid"]
    assert obj["metadata"]["creationTimestamp"] == first["creationTimestamp"]
    assert obj["spec"] == {"replicas": 3} and obj["status"] == {"replicas": {"desired": 1}}


def test_delete_removes_everything_the_xr_composed():
    world = World()
    parent = world.apply(_xr("ModelDeployment", "a", "ns"))
    child = world.apply(_xr("ModelReplica", "a-0-c", "ns"), parent=parent)
    world.apply(_xr("ModelEndpoint", "a-0-c", "ns"), parent=child)
    world.apply(_xr("ModelService", "s", "ns"))
    world.delete(parent)
    assert [k[0] for k in world.ordered()] == ["ModelService"]


def test_order_puts_what_others_read_first():
    world = World()
    for kind in ("ModelService", "ModelDeployment", "InferenceCluster", "InferenceClass"):
        world.apply(_xr(kind, "x", "" if kind.startswith("Inference") else "ns"))
    assert [k[0] for k in world.ordered()] == ["InferenceClass", "InferenceCluster", "ModelDeployment", "ModelService"]


def test_addresses_come_from_the_documentation_range_one_per_key():
    book = health.AddressBook()
    assert book.address("a") == "203.0.113.10"
    assert book.address("b") == "203.0.113.11"
    assert book.address("a") == "203.0.113.10"


def test_remote_objects_report_what_a_healthy_cluster_would():
    book = health.AddressBook()
    job = {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object", "metadata": {"name": "j"},
           "spec": {"forProvider": {"manifest": {"apiVersion": "batch/v1", "kind": "Job",
                                                 "metadata": {"name": "j"}}}}}
    status = health.composed_status(job, "prod-a", book, ready=True)
    remote = status["atProvider"]["manifest"]["status"]
    assert {"type": "Complete", "status": "True", "lastTransitionTime": health.TIMESTAMP} in remote["conditions"]
    unready = health.composed_status(job, "prod-a", book, ready=False)
    assert unready["conditions"][0]["status"] == "False" and "atProvider" not in unready
