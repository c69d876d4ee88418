"""Same-second ModelDeployments competing for one pool, on real Crossplane (``make e2e-crossplane``).

One ``kubectl apply`` creates three deployments within one second, each asking for one whole
8-GPU H100 node of ``onprem-west``, whose h100 pool has two. Crossplane reconciles them in
parallel and in no fixed order, so which two win is not fixed; ``simulate`` always admits in one
order (docs/tools/simulate.md). The test accepts any outcome the real scheduler reaches in some
admission order (``modelplane.simulate.admission_orders``: no overcommit, every loser unplaced
with its reason) and fails on anything else. It runs first in the suite (file order), applies the
platform manifests it needs (the next file applies them again, unchanged) and deletes what it
made, waiting until nothing of it is left on the control plane or the workload cluster.
"""
from __future__ import annotations

import json

import pytest
import yaml
from modelplane.simulate import admission_orders as ao

# long: .ci/run's optional e2e-crossplane-images-long step, after every default suite (make e2e-crossplane
# runs it with the rest).
pytestmark = [pytest.mark.slow, pytest.mark.e2e_crossplane, pytest.mark.long]

NAMESPACE = "compete"
NAMES = ("compete-a", "compete-b", "compete-c")
CLUSTER, POOL = "onprem-west", "h100"
H100 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"'
# Settled: the cluster publishes every placed competitor (so each sees the others' allocations),
# and the outcome then stays the same this many polls in a row (5 s apart): six times Crossplane's
# 10 s poll interval (e2e.core), time for a racing deployment to find itself overcommitted and evicted.
SETTLED_POLLS = 12


def _deployment(name: str) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"replicas": 1, "clusterSelector": {"matchLabels": {"provider": "onprem"}},
                     "engines": [{"name": "engine", "members": [{
                         "role": "Standalone",
                         "nodeSelector": {"devices": [{"name": "gpu", "count": 8, "selectors": [{"cel": H100}]}]},
                         "template": {"spec": {"containers": [{
                             "name": "engine", "image": "vllm/vllm-openai:v0.23.0",
                             "args": ["--model=Qwen/Qwen2.5-0.5B-Instruct"]}]}}}]}]}}


def _scheduled(md: dict) -> dict:
    return next((c for c in (md.get("status") or {}).get("conditions") or [] if c["type"] == "Scheduled"), {})


def _outcome(e2e) -> list[ao.Observed] | str:
    """Each competitor's outcome once it has settled (its own view and its replicas agree, nothing
    leaving), else what is still moving."""
    mds = {o["metadata"]["name"]: o for o in e2e.get("modeldeployments", "-n", NAMESPACE)["items"]}
    replicas = [r for r in e2e.get("modelreplicas", "-n", NAMESPACE)["items"]
                if "modelplane.ai/draining" not in (r["metadata"].get("annotations") or {})]
    out = []
    for name in NAMES:
        md = mds.get(name)
        if md is None:
            return f"{name} not served yet"
        status, cond = md.get("status") or {}, _scheduled(md)
        if status.get("removals") or cond.get("status") not in ("True", "False") \
                or cond.get("reason") == "WaitingForInputs":
            return f"{name}: removals {status.get('removals')}, Scheduled {cond}"
        placed = {r["spec"]["index"]: (r["spec"]["cluster"]["name"],
                                       tuple(m["pool"] for e in r["spec"]["engines"] for m in e["members"]))
                  for r in replicas if r["spec"]["deployment"] == name}
        listed = {p["index"] for p in status.get("placements") or []}
        if listed != set(placed):
            return f"{name}: status lists replicas {sorted(listed)}, ModelReplicas {sorted(placed)}"
        why = cond.get("message", "") if cond.get("status") == "False" else ""
        # Keyed by the indexes not placed: a loser evicted after a race reports its next replica under
        # a fresh index ("replica 1"), since an index is not reused while its old holder terminates.
        unplaced = {i: why for i in range(md["spec"]["replicas"]) if i not in placed}
        out.append(ao.Observed(f"{NAMESPACE}/{name}", placed, unplaced))
    ic = e2e.get("inferencecluster", CLUSTER)
    published = sorted(a["deployment"] for p in (ic.get("status") or {}).get("pools") or []
                       for a in p.get("allocations") or [] if a["deployment"].startswith(f"{NAMESPACE}/"))
    if published != sorted(o.deployment for o in out for _ in o.placed):
        return f"{CLUSTER} publishes allocations of {published}, placed: {out}"
    return out


def _settled(e2e, history: list) -> list[ao.Observed] | str:
    got = _outcome(e2e)
    history.append(repr(got))
    if isinstance(got, str):
        return got
    if len(history) < SETTLED_POLLS or len(set(history[-SETTLED_POLLS:])) > 1:
        return f"not yet stable: {got}"
    return got


def _mine_left(e2e) -> str:
    """What of the competitors is still there: XRs, the Objects and Usages they composed (in the
    namespace: deleting it before they are gone would strand them, as provider-kubernetes cannot
    write its ProviderConfigUsage in a terminating namespace), allocations, remote objects."""
    left = [f"{o['kind']}/{o['metadata']['name']}"
            for plural in ("modeldeployments", "modelreplicas", "modelendpoints", "objects.kubernetes.m.crossplane.io",
                           "usages.protection.crossplane.io")
            for o in e2e.get(plural, "-n", NAMESPACE)["items"]]
    ic = e2e.get("inferencecluster", CLUSTER)
    left += [f"allocation {a['replica']}" for p in (ic.get("status") or {}).get("pools") or []
             for a in p.get("allocations") or [] if a["deployment"].startswith(f"{NAMESPACE}/")]
    kc = e2e.cluster_kubeconfig(CLUSTER)
    for kind in ("deployments", "pods", "services", "resourceclaims"):
        left += [f"{CLUSTER}: {kind}/{o['metadata']['name']}"
                 for o in e2e.get(kind, "-n", NAMESPACE, kubeconfig=kc)["items"]]
    return "; ".join(left)


def _clusters_ready(e2e) -> bool | str:
    items = e2e.get("inferenceclusters")["items"]
    ready = sorted(o["metadata"]["name"] for o in items if any(
        c["type"] == "Ready" and c["status"] == "True" for c in (o.get("status") or {}).get("conditions") or []))
    return ready == sorted(e2e.lab.clusters) or f"Ready: {ready}"


def test_same_second_deployments_end_in_an_outcome_of_some_admission_order(e2e, tmp_path):
    e2e.kubectl("apply", "-f", str(e2e.state / "fleet"))
    e2e.wait("every InferenceCluster Ready", lambda: _clusters_ready(e2e), timeout=420)
    e2e.kubectl("create", "namespace", NAMESPACE, check=False)
    manifest = tmp_path / "competing.yaml"
    manifest.write_text(yaml.safe_dump_all([_deployment(n) for n in NAMES], sort_keys=False))
    try:
        e2e.kubectl("apply", "-f", str(manifest))   # one apply: created within one second
        served = {o["metadata"]["name"]: o for o in e2e.get("modeldeployments", "-n", NAMESPACE)["items"]}
        stamps = {served[n]["metadata"]["creationTimestamp"] for n in NAMES}
        history: list = []
        observed = e2e.wait("the competitors to settle", lambda: _settled(e2e, history), timeout=420, every=5)
        print(f"\ncreated {sorted(stamps)}; outcome {observed}")

        fleet = ao.fleet_before(e2e.get("inferenceclusters")["items"], e2e.get("inferenceclasses")["items"],
                                [f"{NAMESPACE}/{n}" for n in NAMES])
        competitors = [ao.competitor(served[n]) for n in NAMES]
        verdict = ao.check(fleet, competitors, observed)
        print(verdict)
        assert verdict.accepted, str(verdict)
        # The pool takes two of them: two win, one loses for lack of room there.
        assert sorted(len(o.placed) for o in observed) == [0, 1, 1], observed
        assert all(p == (CLUSTER, (POOL,)) for o in observed for p in o.placed.values()), observed
    finally:
        e2e.kubectl("delete", "modeldeployments", *NAMES, "-n", NAMESPACE, "--ignore-not-found", "--wait=false")
        e2e.wait("the competitors and what they composed gone", lambda: _mine_left(e2e) or True, timeout=420, every=5)
        e2e.kubectl("delete", "namespace", NAMESPACE, "--ignore-not-found", timeout=300)


def test_the_competitors_left_no_allocation_behind(e2e):
    """What later tests read is as the platform alone left it: no competitor in any pool."""
    for ic in e2e.get("inferenceclusters")["items"]:
        allocs = [a for p in (ic.get("status") or {}).get("pools") or [] for a in p.get("allocations") or []]
        assert not [a for a in allocs if a["deployment"].startswith(f"{NAMESPACE}/")], json.dumps(allocs)
