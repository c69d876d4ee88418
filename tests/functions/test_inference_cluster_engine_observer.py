"""compose-inference-cluster installs the engine observer: its account, least rights and
Deployment; spec.stack.engineObserver switches it off or names its image; adding it to a
running cluster changes nothing else there (no engine, release or gateway touched)."""
from __future__ import annotations

from modelplane.platform import engine_observer as EO
from modelplane.validate.upstream import assert_valid

from tests.functions.clusters import all_ready, compose, inputs, klass, xr
from tests.support import desired, fatal


def manifests(d: dict) -> dict[str, dict]:
    return {k: d[k]["spec"]["forProvider"]["manifest"] for k in EO.KEYS if k in d}


def test_every_cluster_gets_the_observer_with_least_rights():
    d = desired(compose(xr("GKE"), inputs(klass())))
    got = manifests(d)
    assert sorted(got) == sorted(EO.KEYS)
    for key, m in got.items():
        assert_valid(m)
        assert d[key]["spec"]["readiness"]["policy"] == "SuccessfulCreate", "a report never holds the cluster"
        assert f"usage-{key}" in d, "the cloud cluster outlives what is installed on it"
    rules = {tuple(r["resources"]): sorted(r["verbs"]) for r in got["engine-observer-clusterrole"]["rules"]}
    assert rules == {("pods",): ["get", "list", "watch"], ("configmaps",): ["create", "get", "update"]}
    pod = got["engine-observer-deployment"]["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert c["image"] == EO.DEFAULT_IMAGE
    assert c["command"] == ["/venv/bin/modelplane", "engine-observer"]
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    (prefer,) = pod["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert prefer["preference"]["matchExpressions"] == [{"key": "modelplane.ai/pool", "operator": "DoesNotExist"}]
    assert "claims" not in c["resources"] and "resourceClaims" not in pod, "it asks for no device"
    assert pod["serviceAccountName"] == got["engine-observer-clusterrolebinding"]["subjects"][0]["name"]


def test_the_image_can_be_named():
    x = xr("Existing", stack={"engineObserver": {"image": "registry.example.com/mp/compose-model-replica:v0.1.0"}})
    (c,) = manifests(desired(compose(x, inputs(klass()))))["engine-observer-deployment"]["spec"]["template"][
        "spec"]["containers"]
    assert c["image"] == "registry.example.com/mp/compose-model-replica:v0.1.0"


def test_switched_off_it_is_removed_and_nothing_else_moves():
    on = xr("Existing")
    req = inputs(klass())
    observed = all_ready(on, req)
    off = xr("Existing", stack={"engineObserver": {"enabled": False}})
    rsp = compose(off, req, observed)
    assert fatal(rsp) is None
    d = desired(rsp)
    observer_keys = {*EO.KEYS, *(f"usage-{k}" for k in EO.KEYS)}
    assert not observer_keys & set(d)
    assert not [k for k in d if "engine-observer" in k]
    same = {k: v["spec"] for k, v in desired(compose(on, req, observed)).items() if "engine-observer" not in k}
    assert {k: v["spec"] for k, v in d.items()} == same


def test_adding_it_to_a_running_cluster_only_adds():
    """A cluster composed before the observer existed: everything it had is desired again as it
    was; what is new is the observer's objects and the Usages beside them."""
    x, req = xr("Existing"), inputs(klass())
    now = all_ready(x, req)
    before = {k: v for k, v in now.items() if "engine-observer" not in k}
    after = desired(compose(x, req, before))
    assert {k: after[k]["spec"] for k in before if k in after} == {k: v["spec"] for k, v in before.items()}
    assert set(before) <= set(after)
    assert all("engine-observer" in k for k in set(after) - set(before))
