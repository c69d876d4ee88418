"""Deletion order of composed cloud resources, as Crossplane Usages.

Crossplane deletes every composed resource at once; clouds refuse some of
those deletions while something still sits on the resource (a VPC with
subnets, a subnet with a NAT gateway or nodes, a resource group with a
virtual network). A Usage ``of`` X ``by`` Y holds X's deletion until Y is
gone, and ``replayDeletion`` re-issues it then, so the tree comes down in
dependency order with no retries against the cloud's API.

The order is read off the resources themselves: whoever names a guarded
resource through a ``...Ref``/``...Refs`` field (a subnet's ``vpcIdRef``, a
node group's ``subnetIdRefs``) is deleted first. A cloud adds the few
orders no reference shows (``Source.deletion_order``): EKS's IAM roles and
policy attachments wait for the cluster and node groups that run as them,
AKS's role assignment for the cluster and node pools that act with it. Usages
only point from users to what they use, so they form no cycle and nothing is
left holding the last resource (the VPC, the network, the resource group, a
role).

The same mechanism keeps a workload cluster's ClusterProviderConfigs (the
``kubernetes.m`` and ``helm.m`` ones its InferenceCluster composes) until
every Object and Release that reaches the cluster through them is deleted
(``provider_config_usages``): deleting an InferenceCluster deletes its
provider configs at once, and an Object whose config is gone can never
delete its remote object, so it stays forever. In turn each config holds
the cloud cluster, its node pools and whatever writes the kubeconfig the
configs read (``provider_config_holds``), so the cluster stays up and
reachable until the last config is gone. What this relies on, read in
Crossplane v2.3.0 (``XP`` = github.com/crossplane/crossplane/v2@v2.3.0):

- Deletion is refused by the Usage webhook, which looks Usages up by the
  deleted object's group, kind, name and namespace; a cluster-scoped
  object's namespace is "" (``XP/internal/webhook/protection/usage/handler.go:122``,
  ``XP/internal/protection/usage/finder.go:46-57, 114-124``).
- A namespaced Usage indexes its ``of`` under ``of.resourceRef.namespace``,
  or under the Usage's own namespace when that is unset (``finder.go:72-78``).
  So a namespaced Usage of a cluster-scoped object must say
  ``namespace: ""``: without it the webhook never finds the Usage and the
  deletion goes through. The controller reads the object with the same
  value (``XP/internal/controller/protection/usage/reconciler.go:307-312``),
  and resolving an ``of`` selector to a cluster-scoped object persists
  exactly ``namespace: ""`` (``selector.go``, resolveSelector).
- ``by`` is one resource in the Usage's namespace (``reconciler.go:496-503``);
  a ``by`` selector is resolved once, to the first match (``selector.go``).
  So every user gets its own Usage, in its own namespace.
- A composed Usage being deleted waits until its ``by`` is gone
  (``reconciler.go:314-352``); only then may its ``of`` go.
- ``replayDeletion`` re-issues the refused deletion once the last Usage is
  gone (``reconciler.go:396-413``; the webhook records the attempt,
  ``handler.go:136-147``): the garbage collector that tried to delete the
  provider config backs off exponentially, so without it the config would
  linger for minutes after its last user.
- A ``by`` is read at the Usage's namespace, which the client drops for a
  cluster-scoped kind (``reconciler.go:496-503``, "will always be cluster
  scoped or in the same namespace as the Usage"; controller-runtime v0.23.1
  ``unstructured_client.go`` Get, ``NamespaceIfScoped``). So a namespaced
  Usage may be used *by* a ClusterProviderConfig. A ClusterUsage cannot
  hold a namespaced ``of``: its ``of`` has no namespace and is indexed under
  "" (``finder.go:82-90``), so the webhook never finds it for an object in
  ``modelplane-system``, where a cluster-scoped InferenceCluster's
  namespaced children live (Crossplane only forces the namespace of a
  namespaced XR's children, ``XP/internal/controller/apiextensions/composite/composition_render.go:92-96``).
- A composed resource the XR no longer desires loses its
  ``crossplane.io/composite`` label before Crossplane deletes it
  (``composition_functions.go:891-896``), so a dropped Usage goes at once,
  without waiting for its ``by``; a Usage deleted with its XR keeps the
  label and waits.
- A resource whose management policies leave out Delete is released without
  connecting to its cluster (crossplane-runtime ``reconciler/managed/reconciler.go``,
  "WasDeleted && !ShouldDelete"), so it needs no Usage (the shared team
  namespaces, ``objects.KEEP_ON_DELETE``).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.naming import dns_label
from modelplane.pipeline.composition import Composition
from modelplane.platform.common import NAMESPACE

USAGE_API = "protection.crossplane.io/v1beta1"
USAGE_PREFIX = "usage-"   # composition-resource-names of Usages


def usage(of: Mapping[str, Any], by: Mapping[str, Any], lbls: Mapping[str, str], name: str = "") -> dict[str, Any]:
    """A Usage that keeps ``of`` until ``by`` is deleted, in ``by``'s namespace
    (``of``'s when ``by`` is cluster-scoped).

    An ``of`` without ``metadata.namespace`` is cluster-scoped: its ref says
    ``namespace: ""`` (module docstring); one in another namespace names it.
    """
    # A cluster-scoped ``by`` is read whatever the Usage's namespace (module
    # docstring), so such a Usage sits with what it holds.
    namespace = by["metadata"].get("namespace") or of["metadata"].get("namespace") or NAMESPACE

    def ref(o: Mapping[str, Any], of_ref: bool) -> dict[str, Any]:
        r: dict[str, Any] = {"name": o["metadata"]["name"]}
        if of_ref and o["metadata"].get("namespace", "") != namespace:
            r["namespace"] = o["metadata"].get("namespace", "")
        return {"apiVersion": o["apiVersion"], "kind": o["kind"], "resourceRef": r}

    return {
        "apiVersion": USAGE_API, "kind": "Usage",
        "metadata": {"name": name or dns_label(by["metadata"]["name"], "uses", of["metadata"]["name"]),
                     "namespace": namespace, "labels": dict(sorted(lbls.items()))},
        "spec": {"of": ref(of, True), "by": ref(by, False), "replayDeletion": True},
    }


def referenced_names(value: Any, key: str = "") -> set[str]:
    """metadata.names a manifest refers to through ``*Ref`` / ``*Refs`` fields, at any depth."""
    out: set[str] = set()
    if isinstance(value, Mapping):
        if key.endswith("Ref") and isinstance(value.get("name"), str):
            out.add(value["name"])
        for k, v in value.items():
            out |= referenced_names(v, str(k))
    elif isinstance(value, list):
        for item in value:
            # A ``*Refs`` list holds refs; pass its key on so each item counts as a ref.
            out |= referenced_names(item, key[:-1] if key.endswith("Refs") else "")
    return out


def edges(resources: Mapping[str, Mapping[str, Any]], guarded: Iterable[str],
          extra: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """(user key, used key) pairs: every resource that refers to a guarded one, plus ``extra``.

    ``resources`` maps composition-resource-name -> manifest; ``guarded`` are
    the keys whose deletion must wait. Pairs naming a key that is not in
    ``resources`` are left out (a pool not composed yet uses nothing).
    """
    by_name: dict[str, str] = {}
    for k in sorted(guarded):
        if k in resources:
            name = resources[k]["metadata"]["name"]
            if name in by_name:  # a builder bug: refs could not tell the two apart
                raise ValueError(f"guarded resources {by_name[name]} and {k} share the name {name!r}")
            by_name[name] = k
    out = set()
    for user_key, obj in resources.items():
        for name in referenced_names((obj.get("spec") or {}).get("forProvider") or {}):
            used = by_name.get(name)
            if used is not None and used != user_key:
                out.add((user_key, used))
    out |= {(u, g) for u, g in extra if u in resources and g in resources}
    return sorted(out)


def usage_key(user_key: str, used_key: str) -> str:
    """composition-resource-name of the Usage that orders ``user_key`` before ``used_key``."""
    return f"{usage_prefix(used_key)}{user_key}"


def usage_prefix(used_key: str) -> str:
    """What the composition-resource-name of every ``usage_key`` of ``used_key`` starts with."""
    return f"{USAGE_PREFIX}{used_key}-by-"


# --- workload clusters' provider configs -------------------------------------------------

# API group of a resource that reaches a workload cluster -> the API version of that
# group's ClusterProviderConfig (what compose-inference-cluster composes).
PROVIDER_CONFIG_APIS = {
    "kubernetes.m.crossplane.io": "kubernetes.m.crossplane.io/v1alpha1",
    "helm.m.crossplane.io": "helm.m.crossplane.io/v1beta1",
}
_DELETES = frozenset({"*", "Delete"})


def _group_word(api_version: str) -> str:
    """``kubernetes`` for kubernetes.m.crossplane.io/v1alpha1, ``helm`` for helm.m..."""
    return api_version.split("/")[0].split(".")[0]


# composition-resource-names of provider-config Usages start with one of these.
PROVIDER_CONFIG_USAGE_PREFIXES = tuple(f"{USAGE_PREFIX}{_group_word(g)}-pc-" for g in PROVIDER_CONFIG_APIS)


def provider_config_of(user: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ClusterProviderConfig ``user`` needs in order to be deleted (None when it needs none)."""
    group = str(user.get("apiVersion", "")).split("/")[0]
    spec = user.get("spec") or {}
    ref = spec.get("providerConfigRef") or {}
    api = PROVIDER_CONFIG_APIS.get(group)
    if api is None or ref.get("kind") != "ClusterProviderConfig" or not ref.get("name"):
        return None
    policies = spec.get("managementPolicies")
    if policies is not None and not _DELETES & set(policies):
        return None  # released without reaching the cluster
    return {"apiVersion": api, "kind": "ClusterProviderConfig", "metadata": {"name": ref["name"]}}


def provider_config_usage_key(user_key: str, user: Mapping[str, Any]) -> str:
    """composition-resource-name of the Usage of ``user``'s provider config: a DNS label
    (``usage-kubernetes-pc-<user key>``, cut with a hash when long), like the keys beside it."""
    return dns_label(f"{USAGE_PREFIX}{_group_word(str(user.get('apiVersion', '')))}-pc", user_key)


def provider_config_usages(resources: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """composition-resource-name -> Usage: one per resource whose deletion needs a workload
    cluster's ClusterProviderConfig, holding that config until the resource is gone.

    Each Usage lives in its user's namespace with its user's labels, and is
    named after its user and the config's group (two kinds may share a name).
    """
    out: dict[str, dict[str, Any]] = {}
    for key, user in sorted(resources.items()):
        of = provider_config_of(user)
        if of is None:
            continue
        meta = user.get("metadata") or {}
        name = dns_label(meta["name"], "uses", _group_word(of["apiVersion"]), "pc")
        out[provider_config_usage_key(key, user)] = usage(of, user, meta.get("labels") or {}, name)
    return out


def hold_provider_configs(c: Composition, composed: Mapping[str, Mapping[str, Any]]) -> None:
    """Desire the provider-config Usage of every desired resource; drop those whose user is gone.

    ``composed``: every resource this call desired that may use a provider
    config, as built. Any other desired resource is taken as observed (the
    runtime seeded it from there, and a seeded Object still needs its Usage),
    or read back from the response when it was not observed: reading every
    one back would cost as much as composing the large ones again.
    """
    users = {}
    for k in c.desired_names():
        if k.startswith(USAGE_PREFIX):
            continue
        obj = composed.get(k) or c.observed.get(k) or c.desired(k)
        if obj is not None:
            users[k] = obj
    wanted = provider_config_usages(users)
    for key, obj in wanted.items():
        # A Usage only guards deletion; it has nothing to become ready.
        c.desire(key, obj, ready=True)
    for key in sorted(set(c.observed) | set(c.desired_names())):
        if key.startswith(PROVIDER_CONFIG_USAGE_PREFIXES) and key not in wanted:
            c.drop(key)


# --- what the provider configs reach the cluster through -----------------------------------
#
# The other half of the chain: a cloud cluster, its node pools and whatever writes the
# kubeconfig the provider configs read are each used *by* every one of those configs, so
# they outlast the configs, which outlast their users (above). The kubeconfig Secret itself
# needs no Usage: its writer publishes it with a controller owner reference and never
# deletes it (crossplane-runtime v2.4.0: ``pkg/resource`` LocalConnectionSecretFor;
# ``pkg/reconciler/managed/api.go``, UnpublishConnection is a no-op), so Kubernetes
# collects it only once the held writer is gone.

# composition-resource-names of the Usages a provider config holds something with start
# with one of these (never with a PROVIDER_CONFIG_USAGE_PREFIXES one: those are dropped
# when no user is left).
HELD_BY_PROVIDER_CONFIG_PREFIXES = tuple(f"{USAGE_PREFIX}held-by-{_group_word(g)}-pc-" for g in PROVIDER_CONFIG_APIS)


def held_by_provider_config_key(held_key: str, api_version: str) -> str:
    """composition-resource-name of the Usage of ``held_key`` by the ClusterProviderConfig of
    ``api_version``'s group: ``usage-held-by-kubernetes-pc-<held key>`` (a DNS label)."""
    return dns_label(f"{USAGE_PREFIX}held-by-{_group_word(api_version)}-pc", held_key)


def held_by_provider_config_keys(held_key: str) -> tuple[str, ...]:
    """The keys of every Usage that may hold ``held_key`` for a provider config."""
    return tuple(held_by_provider_config_key(held_key, api) for api in sorted(PROVIDER_CONFIG_APIS.values()))


def kubeconfig_writers(resources: Mapping[str, Mapping[str, Any]], secret: Mapping[str, str]) -> list[str]:
    """Keys of the resources that publish ``secret`` ({namespace, name}) as their connection
    secret: the cluster on GKE and AKS, the ClusterAuth on EKS."""
    out = []
    for key, obj in sorted(resources.items()):
        ref = (obj.get("spec") or {}).get("writeConnectionSecretToRef") or {}
        # A namespaced managed resource writes its secret in its own namespace.
        namespace = ref.get("namespace") or (obj.get("metadata") or {}).get("namespace", "")
        if ref.get("name") == secret.get("name") and namespace == secret.get("namespace"):
            out.append(key)
    return out


def provider_config_holds(configs: Mapping[str, Mapping[str, Any]], held: Mapping[str, Mapping[str, Any]],
                          lbls: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """composition-resource-name -> Usage of each ``held`` resource by each ClusterProviderConfig
    in ``configs``: deleting one waits until every config that reaches the cluster is gone.

    Each Usage sits with what it holds (its ``by`` is cluster-scoped) and is
    named after the config, the held key and the config's group: both configs
    share the cluster's name.
    """
    out: dict[str, dict[str, Any]] = {}
    for _, config in sorted(configs.items()):
        if config.get("kind") != "ClusterProviderConfig" or config["apiVersion"] not in PROVIDER_CONFIG_APIS.values():
            raise ValueError(f"{config.get('kind')} {config['apiVersion']} is not a workload cluster's provider config")
        word = _group_word(config["apiVersion"])
        for key, obj in sorted(held.items()):
            name = dns_label(config["metadata"]["name"], key, "held-by", word, "pc")
            out[held_by_provider_config_key(key, config["apiVersion"])] = usage(obj, config, lbls, name)
    return out
