"""compose-inference-cluster, step by step.

``fn.py`` calls these in order: ``read`` the XR into a ``Plan``, ``require``
the classes and replicas, compose the ``cloud`` (network, cluster and node
pools) and its ``deletion_order``, ``access`` (provider configs),
``hold_cloud`` (Usages keeping the cluster, its pools and the kubeconfig's
writer until the provider configs are gone), the
``stack`` (Releases, gateway, cloud extras, deletion order, Usages holding
the provider configs until their users are gone), then ``report``
status, conditions and readiness.

What is never lost: a pool whose class is not fetched yet, or does not exist
(yet), keeps whatever was composed for it; only pools removed from the spec
and stack components switched off are dropped, because the user asked; so is
a composed network once the user names one of their own.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from modelplane import conditions as cond
from modelplane import labels
from modelplane.errors import InputError
from modelplane.naming import dns_label
from modelplane.objects import remote_namespace, remote_object, remote_status
from modelplane.pipeline.composition import Composition, is_ready
from modelplane.pipeline.xr import parse
from modelplane.platform import (
    aks,
    eks,
    engine_observer,
    existing,
    gateway,
    gke,
    nebius,
    ordering,
    pools,
    stack,
    vultr,
)
from modelplane.platform.clouds import NETWORK_PREFIX, CloudPool, Source, Target
from modelplane.platform.common import GATEWAY_READY, NAMESPACE, cluster_labels
from modelplane.schemas.inference_cluster import InferenceCluster

SOURCES: dict[str, Source] = {s.name: s for s in (gke.SOURCE, eks.SOURCE, aks.SOURCE, nebius.SOURCE, vultr.SOURCE,
                                                  existing.SOURCE)}
# InferenceClass spec.provisioning key -> the source it provisions on (compose-inference-class's status).
PROVISIONING_SOURCES: dict[str, str] = {s.provisioning: s.name for s in SOURCES.values() if s.provisioning}

CLASS_API, CLASS_KIND = "modelplane.ai/v1alpha1", "InferenceClass"
REPLICA_API, REPLICA_KIND = "modelplane.ai/v1alpha1", "ModelReplica"
REPLICAS = "modelreplicas"
CLOUD_CONFIG = "cloud-provider-config"
PROVIDER_CONFIGS = {
    "providerconfig-kubernetes": "kubernetes.m.crossplane.io/v1alpha1",
    "providerconfig-helm": "helm.m.crossplane.io/v1beta1",
}
# Remote objects every cluster gets, next to the Releases.
GATEWAY_KEYS = ("gateway-namespace", "gatewayclass", "gateway")


@dataclass(frozen=True)
class Plan:
    name: str
    spec: Mapping[str, Any]
    source: Source
    target: Target
    labels: Mapping[str, str]

    @property
    def provider_config(self) -> str:
        """kubernetes.m and helm.m ClusterProviderConfig name: the cluster's own."""
        return self.name

    @cached_property
    def infra(self) -> dict[str, dict]:
        """The cloud's network and cluster resources, built once a call (``cloud``, ``hold_cloud``)."""
        return self.source.infra(self.target)

    @property
    def storage_class(self) -> str:
        return (self.target.block.get("cache") or {}).get("storageClassName") or ""


_UNFETCHED: Any = object()  # Inputs.cloud_config before Crossplane fetched it


@dataclass(frozen=True)
class Inputs:
    classes: Mapping[str, Mapping[str, Any] | None]   # name -> spec; absent key = not fetched; None = does not exist
    replicas: list[dict] | None                        # None = not fetched
    # The cloud's provider config, when the source reads an identity from it (Source.identity):
    # _UNFETCHED = not fetched yet; None = does not exist.
    cloud_config: Mapping[str, Any] | None = _UNFETCHED


def read(c: Composition) -> Plan:
    xr = parse(InferenceCluster, c.xr)
    spec = xr.spec.model_dump(by_alias=True, exclude_none=True)
    source = SOURCES[spec["cluster"]["source"]]
    block = spec["cluster"].get(source.block)
    if block is None and source.default_block is not None:
        block = dict(source.default_block)
    if block is None:
        raise InputError(f"spec.cluster.{source.block}",
                         f"source {source.name} needs the {source.block} block; add spec.cluster.{source.block}")
    lbls = cluster_labels(c.name, c.function)
    target = Target(c.name, block, f"spec.cluster.{source.block}", lbls, tuple(spec["nodePools"]))
    if source.check_pools:
        source.check_pools(target)
    return Plan(c.name, spec, source, target, lbls)


def require(c: Composition, plan: Plan) -> Inputs:
    """Ask for every class the pools name and every replica placed here (on every call)."""
    classes: dict[str, Mapping[str, Any] | None] = {}
    for name in sorted({p["class"] for p in plan.spec["nodePools"]}):
        key = f"class-{name}"
        c.require(key, CLASS_API, CLASS_KIND, match_name=name)
        got = c.required(key)
        if got is not None:
            classes[name] = (got[0].get("spec") or {}) if got else None
    c.require(REPLICAS, REPLICA_API, REPLICA_KIND, match_labels={labels.CLUSTER: plan.name})
    identity = plan.source.identity
    if identity is None:
        return Inputs(classes, c.required(REPLICAS))
    c.require(CLOUD_CONFIG, identity.api_version, identity.kind, match_name=plan.target.cloud_provider_config)
    got = c.required(CLOUD_CONFIG)
    return Inputs(classes, c.required(REPLICAS), _UNFETCHED if got is None else (got[0] if got else None))


def nothing_fetched(inputs: Inputs) -> bool:
    """The first call of Crossplane's requirements loop: nothing asked for has been fetched yet.

    Its response only carries the requirements (the loop calls again, with them, and keeps that
    answer), so composing the whole cluster for it is wasted work on every reconcile."""
    return inputs.replicas is None and not inputs.classes


def wait_for_inputs(c: Composition) -> None:
    """Answer the first call: every child kept as observed (the runtime seeded them), the status
    as published, and a condition saying what is awaited."""
    previous = c.xr.get("status") or {}
    c.set_status(**{k: v for k, v in previous.items() if k != "conditions"})
    c.condition(cond.SYNCED_INPUTS, False, cond.WAITING_FOR_INPUTS,
                "waiting for the InferenceClasses and ModelReplicas to be fetched; keeping what is already composed")
    c.set_ready(is_ready(c.xr))


def _pools(plan: Plan, inputs: Inputs) -> list[CloudPool]:
    out = []
    for i, p in enumerate(plan.spec["nodePools"]):
        cls = inputs.classes.get(p["class"])
        prov = ((cls or {}).get("provisioning") or {}).get(plan.source.provisioning or "")
        out.append(CloudPool(i, p["name"], p["class"], p["nodeCount"], p.get("minNodeCount"), p.get("maxNodeCount"),
                        tuple(p.get("zones") or ()), prov or None))
    return out


def cloud(c: Composition, plan: Plan, inputs: Inputs) -> list[tuple[str, str, int]]:
    """Cluster and node pools; returns (pool, class, usable nodes) in spec order."""
    src = plan.source
    infra = dict(plan.infra)
    if src.late:
        infra.update(src.late(plan.target, c.observed))
    for key, obj in sorted(infra.items()):
        c.desire(key, obj)
    for key in sorted(c.observed):
        if key.startswith(NETWORK_PREFIX) and key not in infra:
            c.drop(key)  # the user now names a network of their own
    wanted = set()
    rows = []
    for p in _pools(plan, inputs):
        if src.pool is None:
            rows.append((p.name, p.class_name, p.node_count))
            continue
        key = src.pool_key(p.name)
        wanted.add(key)
        # Only a fetched, existing class composes; otherwise the seed keeps what was there.
        if inputs.classes.get(p.class_name) is not None:
            p = replace(p, observed=c.observed.get(key))
            c.desire(key, src.pool(plan.target, p))
            if src.pool_warning and (warning := src.pool_warning(plan.target, p)):
                c.warning(warning)
        rows.append((p.name, p.class_name, p.node_count if is_ready(c.observed.get(key)) else 0))
    for key in sorted(c.observed):
        if not key.startswith("nodepool-") or key in wanted:
            continue
        # Removed from spec.nodePools. While a provider config still holds it, only its
        # Usages go (``hold_cloud``): deleting it now would be refused.
        if not any(k in c.observed for k in ordering.held_by_provider_config_keys(key)):
            c.drop(key)
    return rows


def deletion_order(c: Composition, plan: Plan) -> None:
    """Usages that keep each network resource, and whatever the cloud orders (its IAM roles
    and role assignment), until everything composed on it is deleted."""
    desired = {k: d for k in c.desired_names() if (d := c.desired(k)) is not None}
    guarded = [k for k in desired if k.startswith(NETWORK_PREFIX)]
    extra = plan.source.deletion_order(plan.target) if plan.source.deletion_order else []
    # Usages of what the cloud orders go when their user does, like those of the network.
    stale = (ordering.USAGE_PREFIX + NETWORK_PREFIX, *sorted({ordering.usage_prefix(used) for _, used in extra}))
    wanted = set()
    for user_key, used_key in ordering.edges(desired, guarded, extra):
        key = ordering.usage_key(user_key, used_key)
        wanted.add(key)
        # A Usage only guards deletion; it has nothing to become ready.
        c.desire(key, ordering.usage(desired[used_key], desired[user_key], plan.labels), ready=True)
    for key in sorted(c.observed):
        if key.startswith(stale) and key not in wanted:
            c.drop(key)  # its user is gone, or no longer uses it


def _identity(plan: Plan, inputs: Inputs) -> tuple[dict[str, Any] | None, str]:
    """The provider configs' ``spec.identity`` read from the cloud's own provider config, and why
    it cannot be had ("" while that config is not fetched yet, or when the source needs none)."""
    identity = plan.source.identity
    if identity is None or inputs.cloud_config is _UNFETCHED:
        return None, ""
    if inputs.cloud_config is None:
        return None, (f"{plan.source.name} {identity.kind} {plan.target.cloud_provider_config!r} named by "
                      f"{plan.target.block_field}.credentials.providerConfigName does not exist; create it "
                      f"(its service-account key also signs in to the cluster)")
    try:
        return identity.derive(plan.target, inputs.cloud_config), ""
    except InputError as err:
        return None, f"{err.field}: {err.message}"


def access(c: Composition, plan: Plan, inputs: Inputs) -> None:
    """The provider configs remote objects and Releases use, reading the cluster's kubeconfig
    (and, where the kubeconfig cannot sign in by itself, the identity the cloud's own provider
    config holds: until that is read and usable, whatever was composed is kept as it is)."""
    secret = plan.source.kubeconfig(plan.target)
    spec: dict[str, Any] = {"credentials": {"source": "Secret", "secretRef": dict(secret)}}
    if plan.source.identity is not None:
        identity, _ = _identity(plan, inputs)
        if identity is None:
            return  # never a provider config that cannot sign in; the seeded ones stay
        spec["identity"] = identity
    for key, api in PROVIDER_CONFIGS.items():
        c.desire(key, {
            "apiVersion": api, "kind": "ClusterProviderConfig",
            "metadata": {"name": plan.provider_config, "labels": dict(sorted(plan.labels.items()))},
            "spec": spec,
        }, ready=True)  # provider configs report no conditions


def hold_cloud(c: Composition, plan: Plan) -> None:
    """Usages that keep the cloud cluster, its node pools and the kubeconfig's writer until
    both provider configs are deleted: the configs wait for every Object and Release that
    deletes through them, and those need the cluster up and reachable to do it.

    A Usage whose held resource is no longer wanted is dropped; the resource
    itself goes on a later call (``cloud``), once that Usage is no longer observed.
    """
    src, names = plan.source, set(c.desired_names())
    held: dict[str, dict] = {}
    if src.cluster_key is not None and src.cluster_key in names:
        # The cluster and the kubeconfig's writer are among the cloud's own resources, as
        # built; only the pools are read back (a seeded one may not have been rebuilt).
        held = {k: plan.infra[k] for k in
                {src.cluster_key, *src.held, *ordering.kubeconfig_writers(plan.infra, src.kubeconfig(plan.target))}}
        pool_keys = {src.pool_key(p["name"]) for p in plan.spec["nodePools"]} & names
        held |= {k: d for k in sorted(pool_keys) if (d := c.desired(k)) is not None}
    configs = {k: obj for k in PROVIDER_CONFIGS if (obj := c.desired(k)) is not None}
    wanted = ordering.provider_config_holds(configs, held, plan.labels) if held else {}
    for usage_key, obj in sorted(wanted.items()):
        # A Usage only guards deletion; it has nothing to become ready.
        c.desire(usage_key, obj, ready=True)
    for usage_key in sorted(set(c.observed) | set(c.desired_names())):
        if usage_key.startswith(ordering.HELD_BY_PROVIDER_CONFIG_PREFIXES) and usage_key not in wanted:
            c.drop(usage_key)


def stack_and_gateway(c: Composition, plan: Plan) -> list[str]:
    """Releases, the in-cluster gateway and cloud extras; returns the remote users' keys."""
    own_class = ((plan.spec.get("gateway") or {}).get("className")) or ""
    stack_spec = dict(plan.spec.get("stack") or {})
    if own_class:  # bring your own gateway: the cluster already runs one
        stack_spec["envoyGateway"] = {**(stack_spec.get("envoyGateway") or {}), "enabled": False}
    releases, disabled = stack.releases(plan.name, plan.provider_config, stack_spec,
                                        plan.source.stack_values, plan.labels)
    for key in disabled:
        c.drop(key)
        c.drop(f"usage-{key}")
    users = dict(releases)
    pc, t = plan.provider_config, plan.target
    users["gateway-namespace"] = remote_namespace(t.key_name("ns", NAMESPACE), pc, NAMESPACE, NAMESPACE,
                                                  labels=plan.labels)
    if own_class:
        c.drop("gatewayclass")
        c.drop("usage-gatewayclass")
    else:
        users["gatewayclass"] = remote_object(t.key_name("gatewayclass"), gateway.gateway_class(), pc,
                                              namespace=NAMESPACE, labels=plan.labels,
                                              readiness="DeriveFromCelQuery")
        users["gatewayclass"]["spec"]["readiness"]["celQuery"] = gateway.ACCEPTED_CEL
    users["gateway"] = remote_object(t.key_name("gateway"), gateway.gateway(class_name=own_class), pc,
                                     namespace=NAMESPACE, labels=plan.labels, readiness="DeriveFromCelQuery")
    users["gateway"]["spec"]["readiness"]["celQuery"] = gateway.PROGRAMMED_CEL
    if plan.source.extra:
        users.update(plan.source.extra(t, pc))
    observer, observer_off = engine_observer.objects(t, pc, stack_spec.get("engineObserver"), plan.labels)
    users.update(observer)
    for key in observer_off:
        c.drop(key)
        c.drop(f"usage-{key}")
    for key, obj in sorted(users.items()):
        c.desire(key, obj)
    _usages(c, plan, users)
    # The provider configs outlive every Object and Release that uses them (ordering.py).
    ordering.hold_provider_configs(c, users)
    return sorted(users)


def _usages(c: Composition, plan: Plan, users: Mapping[str, dict]) -> None:
    """Block deleting the cloud cluster until everything installed on it is gone."""
    key = plan.source.cluster_key
    of = c.desired(key) if key else None
    if of is None:
        return
    for user_key, user in sorted(users.items()):
        # A Usage only guards deletion; it has nothing to become ready.
        c.desire(f"usage-{user_key}", ordering.usage(of, user, plan.labels, dns_label(user["metadata"]["name"], "usage")),
                 ready=True)


def report(c: Composition, plan: Plan, inputs: Inputs, rows: list[tuple[str, str, int]], users: list[str]) -> None:
    """status (contracts.md), conditions that say what is pending, composite readiness."""
    if inputs.replicas is None:
        allocs = pools.previous_allocations(c.xr.get("status") or {})
    else:
        allocs = pools.allocations(inputs.replicas)
    gw_address = gateway.address(remote_status(c.observed.get("gateway")))
    c.set_status(
        providerConfigName=plan.provider_config,
        gateway={"address": gw_address, **gateway.ref()} if gw_address else gateway.ref(),
        cache={"storageClassName": plan.storage_class},
        pools=pools.status(rows, allocs),
    )
    _inputs_condition(c, plan, inputs)
    provisioned = _provisioned_condition(c, plan)
    stack_ok = _stack_condition(c, plan, users)
    gw_ok = bool(gw_address) and is_ready(c.observed.get("gateway"))
    if gw_ok:
        c.condition(GATEWAY_READY, True, cond.AVAILABLE, f"gateway {NAMESPACE}/modelplane at {gw_address}")
    else:
        c.condition(GATEWAY_READY, False, cond.CREATING,
                    f"cluster {plan.name}: waiting for Gateway {NAMESPACE}/modelplane to be ready with an address")
    # Without its provider configs (a Nebius identity not usable yet) nothing on the cluster
    # can be reached, whatever was observed before.
    reachable = all(c.desired(k) is not None for k in PROVIDER_CONFIGS)
    c.set_ready(provisioned and stack_ok and gw_ok and reachable)


def _inputs_condition(c: Composition, plan: Plan, inputs: Inputs) -> None:
    waiting = [f"InferenceClass {n}" for n in sorted({p["class"] for p in plan.spec["nodePools"]})
               if n not in inputs.classes]
    if inputs.replicas is None:
        waiting.append(f"ModelReplicas placed on {plan.name}")
    if plan.source.identity is not None and inputs.cloud_config is _UNFETCHED:
        waiting.append(f"{plan.source.name} {plan.source.identity.kind} {plan.target.cloud_provider_config}")
    missing = [f"InferenceClass {p['class']!r} named by spec.nodePools[{i}].class (pool {p['name']})"
               for i, p in enumerate(plan.spec["nodePools"])
               if p["class"] in inputs.classes and inputs.classes[p["class"]] is None]
    if waiting:
        c.condition(cond.SYNCED_INPUTS, False, cond.WAITING_FOR_INPUTS,
                    f"waiting for {', '.join(waiting)}; keeping what is already composed")
    elif missing:
        c.condition(cond.SYNCED_INPUTS, False, cond.NOT_FOUND,
                    f"{'; '.join(missing)} does not exist; the pool is composed once the class is created")
    elif problem := _identity(plan, inputs)[1]:
        c.condition(cond.SYNCED_INPUTS, False, cond.NOT_FOUND if inputs.cloud_config is None else cond.INVALID_INPUT,
                    f"{problem}; the provider configs are composed once it is fixed")
    else:
        c.condition(cond.SYNCED_INPUTS, True, cond.INPUTS_RESOLVED, "every InferenceClass and ModelReplica read")


def _provisioned_condition(c: Composition, plan: Plan) -> bool:
    src = plan.source
    if src.cluster_key is None:
        c.condition(cond.PROVISIONED, True, cond.AVAILABLE, f"cluster {plan.name}: existing cluster, nothing to provision")
        return True
    cluster_obj = c.desired(src.cluster_key) or {}
    if not is_ready(c.observed.get(src.cluster_key)):
        c.condition(cond.PROVISIONED, False, cond.PROVISIONING,
                    f"cluster {plan.name}: waiting for {cluster_obj.get('kind', 'cluster')} to become Ready")
        return False
    pending = [p["name"] for p in plan.spec["nodePools"] if not is_ready(c.observed.get(src.pool_key(p["name"])))]
    if pending:
        c.condition(cond.PROVISIONED, False, cond.PROVISIONING,
                    f"cluster {plan.name}: waiting for node pools {', '.join(pending)} to become Ready")
        return False
    c.condition(cond.PROVISIONED, True, cond.AVAILABLE,
                f"cluster {plan.name}: cluster and {len(plan.spec['nodePools'])} node pool(s) ready")
    return True


def _stack_condition(c: Composition, plan: Plan, users: list[str]) -> bool:
    releases = [k for k in users if k.startswith("release-")]
    pending = [k.removeprefix("release-") for k in releases if not is_ready(c.observed.get(k))]
    # What the cloud adds that the stack needs (GKE: the GPU driver installer).
    extras = [k for k in plan.source.stack_extras if k in users and not is_ready(c.observed.get(k))]
    if pending or extras:
        waiting = [f"releases {', '.join(pending)}"] if pending else []
        waiting += [", ".join(extras)] if extras else []
        c.condition(cond.STACK_READY, False, cond.CREATING,
                    f"cluster {plan.name}: waiting for {' and '.join(waiting)} to become Ready")
        return False
    c.condition(cond.STACK_READY, True, cond.AVAILABLE, f"cluster {plan.name}: {len(releases)} release(s) ready")
    return True
