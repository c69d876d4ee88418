"""ordering.py: Usages that keep a workload cluster's ClusterProviderConfigs until their users are gone.

The shapes follow what Crossplane v2.3's Usage webhook and controller read
(docs/contracts.md, "Deletion order"): one Usage per user, in the user's
namespace, ``of`` the cluster-scoped config with ``namespace: ""``.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from modelplane import paths
from modelplane.naming import is_dns_label
from modelplane.objects import KEEP_ON_DELETE, remote_object
from modelplane.platform import ordering
from modelplane.validate.upstream import assert_valid


def obj(name: str = "qwen-0-prod-a-deployment", ns: str = "ml-team", pc: str = "prod-a", **kw) -> dict:
    return remote_object(name, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}, pc,
                         namespace=ns, labels={"modelplane.ai/cluster": pc}, **kw)


def release(name: str = "prod-a-lws", ns: str = "modelplane-system", pc: str = "prod-a") -> dict:
    return {"apiVersion": "helm.m.crossplane.io/v1beta1", "kind": "Release",
            "metadata": {"name": name, "namespace": ns, "labels": {"modelplane.ai/cluster": pc}},
            "spec": {"forProvider": {"chart": {"name": "lws"}},
                     "providerConfigRef": {"kind": "ClusterProviderConfig", "name": pc}}}


def test_a_usage_of_a_cluster_scoped_config_sits_beside_its_user_and_names_the_empty_namespace():
    (key, u), = ordering.provider_config_usages({"deployment": obj()}).items()
    assert key == "usage-kubernetes-pc-deployment"
    assert u["metadata"]["namespace"] == "ml-team"        # a Usage's ``by`` is read in its own namespace
    assert u["metadata"]["labels"] == {"modelplane.ai/cluster": "prod-a"}
    assert u["spec"] == {
        "of": {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "ClusterProviderConfig",
               "resourceRef": {"name": "prod-a", "namespace": ""}},
        "by": {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
               "resourceRef": {"name": "qwen-0-prod-a-deployment"}},
        "replayDeletion": True,
    }
    assert_valid(u)


def test_a_release_holds_the_helm_config():
    (key, u), = ordering.provider_config_usages({"release-lws": release()}).items()
    assert key == "usage-helm-pc-release-lws"
    assert u["spec"]["of"] == {"apiVersion": "helm.m.crossplane.io/v1beta1", "kind": "ClusterProviderConfig",
                               "resourceRef": {"name": "prod-a", "namespace": ""}}
    assert u["metadata"]["namespace"] == "modelplane-system"
    assert_valid(u)


def _crd_versions(group: str) -> set[str]:
    found: set[str] = set()
    for path in Path(paths.crds_dir()).rglob("*.yaml"):
        if f"{group}_clusterproviderconfigs" not in path.name:
            continue
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        found |= {v["name"] for v in doc["spec"]["versions"] if v.get("served")}
    return found


@pytest.mark.parametrize("group", sorted(ordering.PROVIDER_CONFIG_APIS))
def test_the_config_api_versions_are_served_by_the_vendored_crds(group):
    # The Usage controller GETs ``of`` at exactly this apiVersion.
    assert ordering.PROVIDER_CONFIG_APIS[group].split("/")[1] in _crd_versions(group)


def test_a_same_namespace_of_keeps_the_namespace_implicit():
    # The cloud ordering Usages: both sides in modelplane-system, as before.
    net = {"apiVersion": "compute.gcp.m.upbound.io/v1beta1", "kind": "Network",
           "metadata": {"name": "prod-a-net", "namespace": "modelplane-system"}}
    sub = {"apiVersion": "compute.gcp.m.upbound.io/v1beta1", "kind": "Subnetwork",
           "metadata": {"name": "prod-a-sub", "namespace": "modelplane-system"}}
    u = ordering.usage(net, sub, {})
    assert u["spec"]["of"]["resourceRef"] == {"name": "prod-a-net"}
    assert u["metadata"] == {"name": "prod-a-sub-uses-prod-a-net", "namespace": "modelplane-system", "labels": {}}


@pytest.mark.parametrize(("policies", "held"), [
    (None, True), (["*"], True), (["Observe", "Create", "Delete"], True), (list(KEEP_ON_DELETE), False),
])
def test_only_users_that_delete_through_the_config_are_held(policies, held):
    # Without Delete, crossplane-runtime drops the finalizer without connecting to the cluster.
    user = obj(management_policies=policies)
    assert bool(ordering.provider_config_usages({"x": user})) is held


@pytest.mark.parametrize("user", [
    # A cloud managed resource names its cloud's provider config, not a workload cluster's.
    {"apiVersion": "container.gcp.m.upbound.io/v1beta1", "kind": "Cluster", "metadata": {"name": "c"},
     "spec": {"providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"}}},
    # A namespaced ProviderConfig lives with its user: nothing composes it separately.
    {**obj(), "spec": {**obj()["spec"], "providerConfigRef": {"kind": "ProviderConfig", "name": "p"}}},
    # What has no provider config (a Usage, a Gateway API object) uses none.
    {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "r"}, "spec": {}},
])
def test_resources_that_use_no_workload_cluster_config_get_no_usage(user):
    assert ordering.provider_config_usages({"x": user}) == {}


def test_names_and_keys_are_short_stable_and_never_collide():
    long = "qwen3-coder-480b-a35b-instruct-fp8-0-gke-us-central-leaderworkerset-deployment"
    users = {long: obj(long), "r": release(long, ns="ml-team"), "o": obj(long[:40])}
    first = ordering.provider_config_usages(users)
    assert first == ordering.provider_config_usages(dict(reversed(list(users.items()))))
    names = [u["metadata"]["name"] for u in first.values()]
    assert len(set(names)) == len(names) == 3            # an Object and a Release may share a name
    for key, u in first.items():
        assert is_dns_label(key) and is_dns_label(u["metadata"]["name"]), (key, u["metadata"]["name"])
        assert key.startswith(ordering.PROVIDER_CONFIG_USAGE_PREFIXES)
