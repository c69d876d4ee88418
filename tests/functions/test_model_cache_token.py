"""compose-model-cache's token copy against a fake provider-kubernetes: no Object keeps the token,
and the upgrade from the single Object earlier releases composed leaves the remote Secret and the
running Job alone."""
from __future__ import annotations

import base64
import copy
import json

from modelplane import secretcopy
from modelplane.platform.ordering import provider_config_usages

from tests.functions.caches import NS, cache, cluster, go, job_status
from tests.support import desired

TOKEN = base64.b64encode(b"hf_0123456789abcdef0123456789abcdef").decode()   # as the provider reads data
REMOTE = "modelcache-qwen3-coder-hf-token"


def provider_writes_back(objects: dict[str, dict], remote_exists: bool) -> None:
    """What provider-kubernetes v1.2.1 does to an Object with references on its first reconciles:
    it patches the referenced value into the Object's manifest in memory and writes the Object
    back whole when it adds its finalizer (object.go:814-826, after Observe: crossplane-runtime
    reconciler.go:1272) or before it creates the remote object (:1287-1297)."""
    for obj in objects.values():
        spec = obj.get("spec") or {}
        if obj.get("kind") != "Object" or not spec.get("references"):
            continue
        policies = set(spec.get("managementPolicies") or ["*"])
        adds_finalizer = secretcopy.OBJECT_FINALIZER not in (obj["metadata"].get("finalizers") or [])
        creates = bool(policies & {"*", "Create"}) and not remote_exists
        if adds_finalizer or creates:
            for ref in spec["references"]:
                _set(spec["forProvider"]["manifest"], ref["toFieldPath"], TOKEN)
        obj["metadata"].setdefault("finalizers", [secretcopy.OBJECT_FINALIZER])


def _set(manifest: dict, path: str, value: str) -> None:
    """Set ``data`` (a whole map) or ``data.<key>``, as the references in these Objects name them."""
    if path == "data":
        manifest["data"] = {"token": value}
    else:
        manifest.setdefault("data", {})[path.split(".", 1)[1]] = value


def holding_token(objects: dict[str, dict]) -> list[str]:
    return sorted(name for name, obj in objects.items() if TOKEN in json.dumps(obj))


def legacy_token_object() -> dict:
    """The token Object releases before this one composed: it creates and fills the Secret itself
    (default policies, the reference on it, no finalizer composed)."""
    labels = {"modelplane.ai/cache": "qwen3-coder", "modelplane.ai/cluster": "prod-a",
              "modelplane.ai/managed-by": "compose-model-cache"}
    return {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
            "metadata": {"name": "modelcache-qwen3-coder-prod-a-token", "namespace": NS, "labels": labels},
            "spec": {"forProvider": {"manifest": {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                                                  "metadata": {"name": REMOTE, "namespace": NS, "labels": labels}}},
                     "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "prod-a"},
                     "readiness": {"policy": "SuccessfulCreate"},
                     "references": [{"patchesFrom": {"apiVersion": "v1", "kind": "Secret", "name": "huggingface",
                                                     "namespace": NS, "fieldPath": "data.token"},
                                     "toFieldPath": "data.token"}]}}


def test_after_the_provider_has_run_no_object_of_a_cache_holds_the_token():
    objects = desired(go(cache(), [cluster("prod-a"), cluster("prod-b")]))
    provider_writes_back(objects, remote_exists=False)
    assert holding_token(objects) == []
    # The honest part: the value does reach the cluster, through exactly one Object per cluster,
    # which may neither create nor delete and carries the provider's finalizer from the start.
    readers = {n: o for n, o in objects.items() if (o.get("spec") or {}).get("references")}
    assert sorted(readers) == ["tokendata-prod-a", "tokendata-prod-b"]
    for obj in readers.values():
        assert obj["spec"]["managementPolicies"] == ["Observe", "Update"]
        assert obj["metadata"]["finalizers"] == [secretcopy.OBJECT_FINALIZER]
        assert obj["spec"]["forProvider"]["manifest"]["metadata"]["name"] == REMOTE


def test_the_fake_provider_finds_the_leak_in_the_single_object_form():
    # The check above would fail on the earlier form: the same write-back leaves the token in its spec.
    objects = {"token-prod-a": legacy_token_object()}
    provider_writes_back(objects, remote_exists=False)
    assert holding_token(objects) == ["token-prod-a"]


def _next_observed(want: dict[str, dict], observed: dict[str, dict]) -> dict[str, dict]:
    """Crossplane applies ``want`` over what exists: fields another manager wrote (the provider's
    write-back of the token, the finalizer, status) stay; new Objects start from ``want``."""
    out = {}
    for name, obj in want.items():
        obj = copy.deepcopy(obj)
        before = observed.get(name)
        if before is not None and obj["kind"] == "Object":
            data = before["spec"]["forProvider"]["manifest"].get("data")
            if data is not None:
                obj["spec"]["forProvider"]["manifest"].setdefault("data", data)
            obj["metadata"]["finalizers"] = before["metadata"].get("finalizers") or []
            if "status" in before:
                obj["status"] = before["status"]
        out[name] = obj
    return out


def test_upgrade_releases_the_single_object_without_touching_the_secret_or_the_running_job():
    # What an earlier release composed and the provider made of it: a running Job, and the
    # single token Object holding the token in its spec.
    first = desired(go(cache(), [cluster("prod-a")]))
    job_key = next(n for n in first if n.startswith("job-"))
    legacy = legacy_token_object()
    observed = {n: o for n, o in first.items() if not n.startswith(("token", "usage-kubernetes-pc-token"))}
    observed["token-prod-a"] = legacy
    observed.update(provider_config_usages({"token-prod-a": legacy}))
    provider_writes_back(observed, remote_exists=False)
    job = observed[job_key]
    job["status"] = {"atProvider": {"manifest": {**job["spec"]["forProvider"]["manifest"],
                                                 "status": job_status(active=1)}}}
    assert holding_token(observed) == ["token-prod-a"]

    steps = []
    for _ in range(3):
        want = desired(go(cache(), [cluster("prod-a")], observed))
        # Dropped Objects are deleted; one whose policies allow Delete deletes the remote Secret.
        deleting = [n for n in set(observed) - set(want) if secretcopy.is_secret_object(observed[n])
                    and set(observed[n]["spec"].get("managementPolicies") or ["*"]) & {"*", "Delete"}]
        assert deleting == [], "the remote Secret the Job's pods read would be deleted"
        assert want[job_key]["spec"]["forProvider"]["manifest"] == job["spec"]["forProvider"]["manifest"]
        steps.append(sorted(n for n in want if n.startswith("token")))
        observed = _next_observed(want, observed)
        provider_writes_back(observed, remote_exists=True)

    # First call: the old Object is released beside the two new ones; second: it is dropped.
    assert steps == [["token-prod-a", "tokencopy-prod-a", "tokendata-prod-a"],
                     ["tokencopy-prod-a", "tokendata-prod-a"], ["tokencopy-prod-a", "tokendata-prod-a"]]
    assert holding_token(observed) == []
    assert not [n for n in observed if n == "usage-kubernetes-pc-token-prod-a"]


def test_the_released_object_observes_only_and_holds_no_reference():
    legacy = legacy_token_object()
    want = desired(go(cache(), [cluster("prod-a")], {"token-prod-a": legacy}))
    released = want["token-prod-a"]
    assert released["metadata"]["name"] == legacy["metadata"]["name"]
    assert released["spec"]["managementPolicies"] == ["Observe"]
    assert "references" not in released["spec"]
    assert secretcopy.is_released(released) and not secretcopy.is_released(legacy)
    # Observe-only needs no provider config to go (its Secret stays): no Usage holds one for it.
    assert "usage-kubernetes-pc-token-prod-a" not in want


def test_a_removed_token_still_deletes_the_old_objects_secret():
    # Releasing is for handing the Secret over; a cache that no longer names a token drops the
    # old Object as before, and its Secret goes with it.
    want = desired(go(cache(token=False), [cluster("prod-a")], {"token-prod-a": legacy_token_object()}))
    assert not [n for n in want if n.startswith("token")]
