"""Where a cluster comes from: one ``Source`` per ``spec.cluster.source``.

GKE, EKS, AKS, Nebius, Vultr and Existing differ as data: which managed resources make the
cluster, its network and its node pools, where the kubeconfig lands, which
StorageClass the model cache uses, and a few stack values. Everything after
that (the provider configs, the stack, the gateway, deletion ordering,
status) is written once, in ``cluster``.

Network resources carry composition-resource-names starting with ``net-``
(``NETWORK_PREFIX``): their deletion waits for whatever refers to them
(``ordering``), and they are dropped when the user switches to a network of
their own.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.errors import InputError
from modelplane.naming import dns_label
from modelplane.platform.common import DEFAULT_KUBERNETES, MIN_KUBERNETES, NAMESPACE


@dataclass(frozen=True)
class Target:
    """One InferenceCluster as the cloud builders see it."""

    name: str
    block: Mapping[str, Any]          # spec.cluster.<gke|eks|aks|existing>, defaults applied
    block_field: str                  # "spec.cluster.gke" for error messages
    labels: Mapping[str, str]
    node_pools: tuple[Mapping[str, Any], ...] = ()   # spec.nodePools, for what depends on all pools (zones)

    def key_name(self, *parts: object) -> str:
        """metadata.name of a child: the cluster name plus ``parts``, as a DNS label."""
        return dns_label(self.name, *parts)

    @property
    def kubeconfig_secret(self) -> str:
        return dns_label(self.name, "kubeconfig")

    @property
    def cloud_provider_config(self) -> str:
        return (self.block.get("credentials") or {}).get("providerConfigName") or "default"


@dataclass(frozen=True)
class CloudPool:
    """One spec.nodePools entry with its class's provisioning block for this cloud."""

    index: int
    name: str
    class_name: str
    node_count: int
    min_nodes: int | None
    max_nodes: int | None
    zones: tuple[str, ...]
    provisioning: Mapping[str, Any] | None
    # The pool's resource as observed (None before it exists): a builder keeps what the
    # cloud could only change by replacing the pool and its nodes (``gke_dra``).
    observed: Mapping[str, Any] | None = None

    @property
    def field(self) -> str:
        return f"spec.nodePools[{self.index}]"


@dataclass(frozen=True)
class Identity:
    """How the kubernetes and helm provider configs authenticate where a kubeconfig cannot:
    read from the cloud's own provider config (fetched as a required resource)."""

    api_version: str
    kind: str
    # (target, the fetched provider config) -> spec.identity, or InputError naming what to fix
    derive: Callable[[Target, Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Source:
    """How one cluster source provisions, connects and stores."""

    name: str                                              # GKE | EKS | AKS | Nebius | Vultr | Existing
    block: str                                             # gke | eks | aks | nebius | vultr | existing
    provisioning: str | None                               # InferenceClass spec.provisioning.<key>; None = nothing to provision
    infra: Callable[[Target], dict[str, dict]]             # composition-resource-name -> resource
    pool: Callable[[Target, CloudPool], dict] | None            # the node pool resource
    kubeconfig: Callable[[Target], dict[str, str]]         # Secret {namespace, name, key}
    cluster_key: str | None = None                         # the resource whose Ready means "cluster up"
    extra: Callable[[Target, str], dict[str, dict]] | None = None   # remote objects of this cloud (by provider config)
    stack_values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Resources that need what the cloud reported about others (observed by key), composed once known.
    late: Callable[[Target, Mapping[str, Mapping[str, Any]]], dict[str, dict]] | None = None
    # (user key, used key) deletion orders that no reference shows (see ``ordering``).
    deletion_order: Callable[[Target], list[tuple[str, str]]] | None = None
    # Checked before anything is composed: errors that name two pools at once (AKS pool names).
    check_pools: Callable[[Target], None] | None = None
    # More of the cloud's resources the provider configs must outlive, besides the cluster and
    # its pools (a separate system node group the stack's controllers run on).
    held: tuple[str, ...] = ()
    # The block when it is omitted (every field has a default: Nebius): the API server applies
    # a block's schema defaults only inside a block that is there, so they are restated here.
    default_block: Mapping[str, Any] | None = None
    # The kubeconfig alone cannot authenticate: the provider configs need this identity too.
    identity: Identity | None = None
    # This cloud's extras (``extra`` keys) the stack is not ready without, reported in
    # StackReady with the releases (GKE: the driver installer NVIDIA's DRA driver needs).
    stack_extras: tuple[str, ...] = ()
    # A warning about a pool kept as it runs rather than as its class now reads (None: nothing to say).
    pool_warning: Callable[[Target, CloudPool], str | None] | None = None

    def pool_key(self, pool_name: str) -> str:
        return f"nodepool-{pool_name}"


NETWORK_PREFIX = "net-"


def connection_secret(t: Target) -> dict[str, str]:
    """The kubeconfig a provisioned cluster writes (key ``kubeconfig``, like upjet)."""
    return {"namespace": NAMESPACE, "name": t.kubeconfig_secret, "key": "kubeconfig"}


def kubernetes_version(t: Target, default: str = DEFAULT_KUBERNETES) -> str:
    """spec.cluster.<source>.kubernetesVersion (or ``default``, the cloud's spelling of the
    Modelplane default), checked to be DRA-capable (>= 1.34)."""
    version = str(t.block.get("kubernetesVersion") or default)
    m = re.match(r"^v?(\d+)\.(\d+)(?:$|[.\-+])", version)
    if not m:
        raise InputError(f"{t.block_field}.kubernetesVersion",
                         f"{version!r} is not a Kubernetes version; write MAJOR.MINOR such as {default}")
    if (int(m.group(1)), int(m.group(2))) < MIN_KUBERNETES:
        low = ".".join(str(p) for p in MIN_KUBERNETES)
        raise InputError(f"{t.block_field}.kubernetesVersion",
                         f"{version} has no Dynamic Resource Allocation; use {low} or newer (default {default})")
    return version


def provisioning_for(source: Source, pool: CloudPool) -> Mapping[str, Any]:
    """The class's provisioning block for this cloud, or an InputError naming the pool's class."""
    if not pool.provisioning:
        raise InputError(f"{pool.field}.class",
                         f"InferenceClass {pool.class_name!r} has no provisioning.{source.provisioning} block, "
                         f"so this {source.name} cluster cannot create its nodes; pick a class with "
                         f"provisioning.{source.provisioning} or add one to the class")
    return pool.provisioning
