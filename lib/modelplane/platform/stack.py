"""The inference stack on every workload cluster, as provider-helm Releases.

One row per ``spec.stack`` component. Chart versions are pinned here so a
cluster built today and one built next month run the same stack; a platform
team moves a component with ``spec.stack.<component>.version``, adds Helm
values with ``.values`` (merged over ours) and removes it with
``.enabled: false``. A component may need more than one chart (Dynamo ships
its CRDs separately); they share the component's version.

Clouds differ in a few values (where the GPU driver lives on the node), so
``releases`` takes per-component overlays from the cloud table.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.naming import dns_label
from modelplane.platform.common import NAMESPACE, cluster_provider_config, deep_merge, meta

RELEASE_API = "helm.m.crossplane.io/v1beta1"


@dataclass(frozen=True)
class Chart:
    suffix: str          # composition-resource-name "release-<suffix>", metadata.name "<cluster>-<suffix>"
    name: str
    repository: str
    values: Mapping[str, Any] = field(default_factory=dict)
    main: bool = True    # takes spec.stack.<key>.values (a CRD-only chart does not)


@dataclass(frozen=True)
class Component:
    key: str             # spec.stack.<key>
    version: str         # pinned default
    namespace: str       # remote namespace the charts install into
    charts: tuple[Chart, ...]


COMPONENTS: tuple[Component, ...] = (
    Component("leaderWorkerSet", "0.10.0", "lws-system", (
        Chart("lws", "lws", "oci://registry.k8s.io/lws/charts"),
    )),
    # The cluster's default endpoint picker and InferencePool for Modelplane
    # model servers; replicas add their own pools next to it.
    Component("inferenceExtension", "v1.6.0", NAMESPACE, (
        Chart("inference-extension", "inferencepool", "oci://registry.k8s.io/gateway-api-inference-extension/charts",
              {"inferencePool": {"modelServers": {"matchLabels": {"modelplane.ai/managed-by": "compose-model-replica"}}}}),
    )),
    Component("dynamo", "0.9.1", "dynamo-system", (
        Chart("dynamo-crds", "dynamo-crds", "https://helm.ngc.nvidia.com/nvidia/ai-dynamo", main=False),
        Chart("dynamo-platform", "dynamo-platform", "https://helm.ngc.nvidia.com/nvidia/ai-dynamo"),
    )),
    Component("envoyGateway", "v1.9.0", "envoy-gateway-system", (
        Chart("envoy-gateway", "gateway-helm", "oci://docker.io/envoyproxy"),
    )),
    # GPU allocation through DRA is what the scheduler's device model assumes.
    Component("draDriver", "25.12.0", "nvidia-dra-driver-gpu", (
        Chart("dra-driver", "nvidia-dra-driver-gpu", "https://helm.ngc.nvidia.com/nvidia",
              {"gpuResourcesEnabledOverride": True, "resources": {"gpus": {"enabled": True}}}),
    )),
)


def release_key(chart: Chart) -> str:
    return f"release-{chart.suffix}"


def all_release_keys() -> list[str]:
    return sorted(release_key(ch) for comp in COMPONENTS for ch in comp.charts)


def release(cluster: str, provider_config: str, comp: Component, chart: Chart, version: str,
            values: Mapping[str, Any], lbls: Mapping[str, str]) -> dict[str, Any]:
    """One Release of ``chart`` on the cluster behind ``provider_config``."""
    for_provider: dict[str, Any] = {
        "chart": {"name": chart.name, "repository": chart.repository, "version": version},
        "namespace": comp.namespace,
    }
    if values:
        for_provider["values"] = dict(values)
    return {
        "apiVersion": RELEASE_API,
        "kind": "Release",
        "metadata": meta(dns_label(cluster, chart.suffix), lbls),
        "spec": {"forProvider": for_provider, "providerConfigRef": cluster_provider_config(provider_config)},
    }


def releases(cluster: str, provider_config: str, stack: Mapping[str, Any],
             overlays: Mapping[str, Mapping[str, Any]], lbls: Mapping[str, str]) -> tuple[dict[str, dict], list[str]]:
    """(composition-resource-name -> Release for enabled components, names of disabled ones)."""
    wanted: dict[str, dict] = {}
    disabled: list[str] = []
    for comp in COMPONENTS:
        settings = stack.get(comp.key) or {}
        keys = [release_key(ch) for ch in comp.charts]
        if settings.get("enabled", True) is False:
            disabled.extend(keys)
            continue
        version = settings.get("version") or comp.version
        for chart, key in zip(comp.charts, keys):
            values = dict(chart.values)
            if chart.main:
                values = deep_merge(deep_merge(values, overlays.get(comp.key)), settings.get("values"))
            wanted[key] = release(cluster, provider_config, comp, chart, version, values, lbls)
    return wanted, sorted(disabled)
