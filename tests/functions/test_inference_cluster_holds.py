"""compose-inference-cluster: a cloud cluster outlives the provider configs that reach it.

Deleting an InferenceCluster deletes everything it composed at once. The
Objects and Releases that delete through its ClusterProviderConfigs hold
those configs (tests/platform/test_provider_config_usages.py); here the
configs hold the cloud cluster, its node pools and the kubeconfig's writer,
so the chain user -> config -> cluster comes down in that order
(docs/contracts.md, "Deletion order").
"""
from __future__ import annotations

import pytest
from modelplane.objects import remote_object
from modelplane.platform import ordering

from tests.functions import cluster_networks as net
from tests.functions import clusters as ic
from tests.support import desired, fatal

PROVIDER_CONFIG_KEYS = ("providerconfig-helm", "providerconfig-kubernetes")
TWO_POOLS = [ic.pool(), ic.pool("big", count=3)]
CLOUDS = {
    "GKE": (net.gke(TWO_POOLS), None, "cluster"),
    "EKS": (net.eks(TWO_POOLS), None, "clusterauth"),
    "AKS": (net.aks(TWO_POOLS), net.AKS_OBSERVED, "cluster"),
}


def _compose(x: dict, observed: dict | None = None) -> dict[str, dict]:
    rsp = ic.compose(x, net.inputs(), observed)
    assert fatal(rsp) is None
    return desired(rsp)


def _holds(d: dict[str, dict]) -> dict[str, dict]:
    return {k: v for k, v in d.items() if k.startswith(ordering.HELD_BY_PROVIDER_CONFIG_PREFIXES)}


def _ident(obj: dict) -> tuple[str, str, str]:
    return obj["apiVersion"].split("/")[0], obj["kind"], obj["metadata"]["name"]


def _ref_ident(ref: dict) -> tuple[str, str, str]:
    return ref["apiVersion"].split("/")[0], ref["kind"], ref["resourceRef"]["name"]


@pytest.mark.parametrize("source", sorted(CLOUDS))
def test_both_provider_configs_hold_the_cluster_its_pools_and_the_kubeconfig_writer(source):
    x, observed, writer = CLOUDS[source]
    d = _compose(x, observed)
    by_ident = {_ident(o): k for k, o in d.items()}
    pairs = set()
    for key, u in _holds(d).items():
        of, by = by_ident[_ref_ident(u["spec"]["of"])], by_ident[_ref_ident(u["spec"]["by"])]
        # ``of`` resolves in the Usage's namespace; ``by`` is the cluster-scoped config.
        assert u["metadata"]["namespace"] == d[of]["metadata"]["namespace"] == "modelplane-system"
        assert "namespace" not in u["spec"]["of"]["resourceRef"]
        assert "namespace" not in d[by]["metadata"]
        assert key == ordering.held_by_provider_config_key(of, d[by]["apiVersion"])
        pairs.add((by, of))
    held = {"cluster", writer, "nodepool-l4", "nodepool-big"}
    assert pairs == {(pc, k) for pc in PROVIDER_CONFIG_KEYS for k in held}
    # The writer publishes exactly the Secret the configs read.
    secret = d["providerconfig-kubernetes"]["spec"]["credentials"]["secretRef"]
    assert d[writer]["spec"]["writeConnectionSecretToRef"] == {"name": secret["name"]}
    assert d[writer]["metadata"]["namespace"] == secret["namespace"]


def test_an_existing_cluster_is_held_by_nothing():
    assert _holds(desired(ic.compose(ic.xr("Existing"), ic.inputs(ic.klass())))) == {}


def _deletion_rounds(d: dict[str, dict]) -> list[set[tuple[str, str, str]]]:
    """Delete everything at once, as Kubernetes collects an XR's children, and let the Usage
    webhook refuse what a Usage still holds; a Usage goes once its ``by`` is gone. Returns
    the non-Usage resources deleted in each round."""
    usages = [(_ref_ident(u["spec"]["by"]), _ref_ident(u["spec"]["of"])) for u in d.values() if u["kind"] == "Usage"]
    alive = {_ident(o) for o in d.values() if o["kind"] != "Usage"}
    rounds = []
    while alive:
        gone = {r for r in alive if not any(of == r and by in alive for by, of in usages)}
        assert gone, f"deletion deadlock among {sorted(alive)}"
        rounds.append(gone)
        alive -= gone
    return rounds


def _with_replica(d: dict[str, dict]) -> dict[str, dict]:
    """``d`` plus a replica's Object, composed elsewhere (compose-model-replica), holding the
    kubernetes config the same way the stack's users do."""
    replica = remote_object("qwen-0-prod-a-deployment", {"apiVersion": "apps/v1", "kind": "Deployment",
                                                         "metadata": {"name": "qwen"}}, "prod-a", namespace="ml-team")
    return {**d, "replica": replica, **ordering.provider_config_usages({"replica": replica})}


def _order(d: dict[str, dict], writer: str) -> tuple[dict, list, list, list]:
    """(resource -> deletion round, users of the configs, the configs, what they hold)."""
    when = {r: i for i, gone in enumerate(_deletion_rounds(d)) for r in gone}
    users = [_ident(o) for o in d.values() if ordering.provider_config_of(o) is not None]
    configs = [_ident(d[k]) for k in PROVIDER_CONFIG_KEYS]
    held = [_ident(d[k]) for k in ("cluster", writer, "nodepool-l4", "nodepool-big")]
    return when, users, configs, held


@pytest.mark.parametrize("source", sorted(CLOUDS))
def test_deleting_the_cluster_with_replicas_takes_users_then_configs_then_the_cloud(source):
    x, observed, writer = CLOUDS[source]
    d = _with_replica(_compose(x, observed))
    when, users, configs, held = _order(d, writer)
    assert _ident(d["replica"]) in users and len(users) > 5
    last_user = max(when[u] for u in users)
    assert all(when[c] > last_user for c in configs), "a provider config went while a user still needed it"
    assert all(when[h] > max(when[c] for c in configs) for h in held), "the cloud went before its provider configs"


def test_without_the_holds_the_cloud_goes_while_the_configs_still_serve_a_replica():
    # The order above comes from the new Usages: without them the pools go with the users and
    # the cluster no later than its configs (the stack's own Usages hold it for the stack only).
    x, observed, writer = CLOUDS["GKE"]
    d = _compose(x, observed)
    d = _with_replica({k: v for k, v in d.items() if k not in _holds(d)})
    when, _, configs, _ = _order(d, writer)
    assert when[_ident(d["nodepool-l4"])] == when[_ident(d["replica"])] == 0
    assert when[_ident(d["cluster"])] <= max(when[c] for c in configs)


def _observed(d: dict[str, dict]) -> dict[str, dict]:
    return {k: ic.ready(v) for k, v in d.items()}


@pytest.mark.parametrize("source", sorted(CLOUDS))
def test_holds_stay_while_what_they_hold_is_wanted(source):
    x, observed, _ = CLOUDS[source]
    first = _compose(x, observed)
    again = _compose(x, {**_observed(first), **(observed or {})})
    assert _holds(again) == _holds(first)


def test_a_pool_whose_class_is_not_read_yet_is_held_only_once_composed():
    x, _, _ = CLOUDS["GKE"]
    # No class read yet, so no pool is composed and nothing may name one.
    d = desired(ic.compose(x, {"modelreplicas": []}))
    assert {u["spec"]["of"]["kind"] for u in _holds(d).values()} == {"Cluster"}
    # A pool kept from the observed state while its class is not read stays held.
    observed = _observed(_compose(x))
    d = desired(ic.compose(x, {"modelreplicas": []}, observed))
    assert "nodepool-big" in d
    assert set(ordering.held_by_provider_config_keys("nodepool-big")) <= set(d)


def test_a_removed_pool_is_let_go_before_it_is_deleted_and_the_others_stay_held():
    x, _, _ = CLOUDS["EKS"]
    observed = _observed(_compose(x))
    one_pool = net.eks([ic.pool()])
    first = _compose(one_pool, observed)
    assert "nodepool-big" in first
    assert not set(ordering.held_by_provider_config_keys("nodepool-big")) & set(first)
    assert set(ordering.held_by_provider_config_keys("nodepool-l4")) <= set(first)
    second = _compose(one_pool, {k: v for k, v in observed.items() if k in first})
    assert "nodepool-big" not in second
    assert _holds(second) == _holds(first)


def test_network_resources_are_not_held_by_the_configs():
    # They wait for the cluster and pools through their own Usages (test_inference_cluster_networks).
    x, observed, _ = CLOUDS["AKS"]
    d = _compose(x, observed)
    network = {_ident(o) for k, o in d.items() if k.startswith("net-")}
    assert network and not [u for u in _holds(d).values() if _ref_ident(u["spec"]["of"]) in network]
