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
    # (name, repository) of the same chart under the name it had before a rename,
    # for a version of the old line, which the renamed chart never published (``LEGACY_MAJOR``).
    legacy: tuple[str, str] | None = None


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
    # The cluster's default endpoint picker and InferencePool. It selects no engine pod,
    # whatever its labels: an InferencePool selects pods in its own namespace only
    # (gateway-api-inference-extension api/v1/inferencepool_types.go, InferencePoolSpec.
    # Selector), this one lives in modelplane-system and engine pods in the ML teams'
    # namespaces. Every replica composes its own pool and picker beside its pods and routes
    # to them. Retiring the component is an API change (spec.stack.inferenceExtension);
    # until then it installs an idle picker and nothing routes to it.
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
    # NVIDIA's DRA driver moved to kubernetes-sigs/dra-driver-nvidia-gpu; from 0.4.0 its
    # chart is named dra-driver-nvidia-gpu and starts on drivers from 565 on (the 25.x
    # line needs 580: modelplane.platform.gpu_drivers). nameOverride keeps the old chart's
    # object names and DaemonSet selector, so Helm upgrades a release installed from the
    # old chart in place instead of creating a second kubelet plugin beside the first
    # (upstream docs/upgrade.md, v0.4.1). A spec.stack.draDriver.version of the 25.x line
    # still installs the old chart from NGC (``legacy``).
    Component("draDriver", "0.4.1", "nvidia-dra-driver-gpu", (
        Chart("dra-driver", "dra-driver-nvidia-gpu", "oci://registry.k8s.io/dra-driver-nvidia/charts",
              {"gpuResourcesEnabledOverride": True, "resources": {"gpus": {"enabled": True}},
               "nameOverride": "nvidia-dra-driver-gpu"},
              legacy=("nvidia-dra-driver-gpu", "https://helm.ngc.nvidia.com/nvidia")),
    )),
)

# Chart versions of the old calendar line (25.3.0 ... 25.12.0) are 25 and up; the
# renamed chart restarted at 0.4.0.
LEGACY_MAJOR = 25


def chart_source(chart: Chart, version: str) -> tuple[str, str]:
    """(chart name, repository) that publishes ``chart`` at ``version``."""
    if chart.legacy is not None and _major(version) >= LEGACY_MAJOR:
        return chart.legacy
    return chart.name, chart.repository


def _major(version: str) -> int:
    head = version.lstrip("v").split(".", 1)[0]
    return int(head) if head.isdigit() else -1


def release_key(chart: Chart) -> str:
    return f"release-{chart.suffix}"


def all_release_keys() -> list[str]:
    return sorted(release_key(ch) for comp in COMPONENTS for ch in comp.charts)


def release(cluster: str, provider_config: str, comp: Component, chart: Chart, version: str,
            values: Mapping[str, Any], lbls: Mapping[str, str]) -> dict[str, Any]:
    """One Release of ``chart`` on the cluster behind ``provider_config``."""
    name, repository = chart_source(chart, version)
    for_provider: dict[str, Any] = {
        "chart": {"name": name, "repository": repository, "version": version},
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
