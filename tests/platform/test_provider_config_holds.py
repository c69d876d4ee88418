"""ordering.py: Usages that keep a cloud cluster (and what its provider configs read) until the
cluster's ClusterProviderConfigs are gone.

Shapes follow what Crossplane v2.3 reads (docs/contracts.md, "Deletion order"):
a namespaced Usage beside the held resource, ``by`` a cluster-scoped config
read by name only; one Usage per (config, held resource).
"""
from __future__ import annotations

import pytest
from modelplane.naming import is_dns_label
from modelplane.platform import ordering
from modelplane.validate.upstream import assert_valid

NS = "modelplane-system"
KUBE_PC = {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "ClusterProviderConfig",
           "metadata": {"name": "prod-a"}}
HELM_PC = {"apiVersion": "helm.m.crossplane.io/v1beta1", "kind": "ClusterProviderConfig",
           "metadata": {"name": "prod-a"}}
CONFIGS = {"providerconfig-kubernetes": KUBE_PC, "providerconfig-helm": HELM_PC}
LABELS = {"modelplane.ai/cluster": "prod-a"}


def mr(kind: str, name: str, api: str = "eks.aws.m.upbound.io/v1beta1", ns: str = NS, secret: str = "") -> dict:
    spec: dict = {"forProvider": {}, "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"}}
    if secret:
        spec["writeConnectionSecretToRef"] = {"name": secret}
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": ns}, "spec": spec}


def test_a_held_resource_waits_for_each_config_with_a_usage_beside_it():
    held = {"cluster": mr("Cluster", "prod-a")}
    got = ordering.provider_config_holds(CONFIGS, held, LABELS)
    assert sorted(got) == ["usage-held-by-helm-pc-cluster", "usage-held-by-kubernetes-pc-cluster"]
    u = got["usage-held-by-kubernetes-pc-cluster"]
    # Beside what it holds: ``of`` needs no namespace; ``by`` is cluster-scoped, read by name.
    assert u["metadata"] == {"name": "prod-a-cluster-held-by-kubernetes-pc", "namespace": NS, "labels": LABELS}
    assert u["spec"] == {
        "of": {"apiVersion": "eks.aws.m.upbound.io/v1beta1", "kind": "Cluster", "resourceRef": {"name": "prod-a"}},
        "by": {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "ClusterProviderConfig",
               "resourceRef": {"name": "prod-a"}},
        "replayDeletion": True,
    }
    assert got["usage-held-by-helm-pc-cluster"]["spec"]["by"]["apiVersion"] == "helm.m.crossplane.io/v1beta1"
    for obj in got.values():
        assert_valid(obj)


def test_a_cluster_scoped_user_puts_the_usage_in_the_namespace_of_what_it_holds():
    u = ordering.usage(mr("Cluster", "c", ns="team-x"), KUBE_PC, {})
    assert u["metadata"]["namespace"] == "team-x"
    assert u["spec"]["of"]["resourceRef"] == {"name": "c"}


def test_keys_never_look_like_a_users_provider_config_usage():
    # hold_provider_configs drops every PROVIDER_CONFIG_USAGE_PREFIXES key it did not build.
    got = ordering.provider_config_holds(CONFIGS, {"cluster": mr("Cluster", "prod-a")}, {})
    for key in got:
        assert key.startswith(ordering.HELD_BY_PROVIDER_CONFIG_PREFIXES)
        assert not key.startswith(ordering.PROVIDER_CONFIG_USAGE_PREFIXES)
    assert set(got) == set(ordering.held_by_provider_config_keys("cluster"))


def test_names_and_keys_are_dns_labels_stable_and_distinct_per_config_and_held_resource():
    pool = "a" * 40                                  # the longest pool name the XRD admits
    held = {"cluster": mr("Cluster", "prod-a"), f"nodepool-{pool}": mr("NodeGroup", f"prod-a-{pool}"),
            f"nodepool-{pool}x": mr("NodeGroup", f"prod-a-{pool}x")}
    cluster = "c" * 63
    configs = {k: {**v, "metadata": {"name": cluster}} for k, v in CONFIGS.items()}
    first = ordering.provider_config_holds(configs, held, {})
    assert first == ordering.provider_config_holds(dict(reversed(configs.items())), dict(reversed(held.items())), {})
    names = [u["metadata"]["name"] for u in first.values()]
    assert len(first) == len(set(names)) == 6
    for key, u in first.items():
        assert is_dns_label(key) and is_dns_label(u["metadata"]["name"]), (key, u["metadata"]["name"])
        assert key.startswith(ordering.HELD_BY_PROVIDER_CONFIG_PREFIXES)


def test_only_a_workload_clusters_provider_config_may_hold():
    cloud_pc = {"apiVersion": "aws.m.upbound.io/v1beta1", "kind": "ClusterProviderConfig", "metadata": {"name": "x"}}
    with pytest.raises(ValueError, match="aws.m.upbound.io"):
        ordering.provider_config_holds({"pc": cloud_pc}, {"cluster": mr("Cluster", "prod-a")}, {})


@pytest.mark.parametrize(("resources", "writers"), [
    # GKE, AKS: the cluster publishes its kubeconfig.
    ({"cluster": mr("Cluster", "prod-a", secret="prod-a-kubeconfig"), "nodepool-l4": mr("NodePool", "prod-a-l4")},
     ["cluster"]),
    # EKS: ClusterAuth does; the cluster writes nothing.
    ({"cluster": mr("Cluster", "prod-a"), "clusterauth": mr("ClusterAuth", "prod-a-auth", secret="prod-a-kubeconfig")},
     ["clusterauth"]),
    # The same name in another namespace, or another secret, is not what the configs read.
    ({"cluster": mr("Cluster", "prod-a", ns="other", secret="prod-a-kubeconfig"),
      "db": mr("Instance", "db", secret="db-conn")}, []),
])
def test_kubeconfig_writers_are_the_resources_publishing_the_secret_the_configs_read(resources, writers):
    secret = {"namespace": NS, "name": "prod-a-kubeconfig", "key": "kubeconfig"}
    assert ordering.kubeconfig_writers(resources, secret) == writers
