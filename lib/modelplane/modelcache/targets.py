"""Which clusters a ModelCache lands on, and what each one still lacks.

A cluster can take a cache once it has published its provider config
(``status.providerConfigName``) and a cache StorageClass
(``status.cache.storageClassName``). We deliberately do not wait for the
cluster's Ready condition: Ready also waits for the serving stack and the
gateway, while hydrating hundreds of GiB can start as soon as the API server
is reachable, so the two overlap. A matched cluster that is missing either
field is still reported (phase Pending, naming what is missing), never
silently skipped.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Target:
    """One matched InferenceCluster as the cache sees it."""

    name: str
    provider_config: str = ""
    storage_class: str = ""

    @property
    def missing(self) -> str:
        """What keeps the cache off this cluster ('' when nothing does)."""
        if not self.provider_config:
            return f"InferenceCluster {self.name} has not published status.providerConfigName yet"
        if not self.storage_class:
            return (f"InferenceCluster {self.name} has no cache StorageClass "
                    f"(status.cache.storageClassName); set spec.cache on the cluster")
        return ""


def targets(clusters: list[Mapping[str, Any]]) -> list[Target]:
    """The matched clusters, sorted by name."""
    out = []
    for obj in clusters:
        name = (obj.get("metadata") or {}).get("name", "")
        if not name:
            continue
        status = obj.get("status") or {}
        out.append(Target(
            name=name,
            provider_config=status.get("providerConfigName") or "",
            storage_class=(status.get("cache") or {}).get("storageClassName") or "",
        ))
    return sorted(out, key=lambda t: t.name)
