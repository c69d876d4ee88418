"""Which DeploymentRuntimeConfig a provider runs with, and the command line it gives it.

Crossplane's Deployment runtime builds a provider's Deployment from a
DeploymentRuntimeConfig: the revision's ``runtimeConfigRef`` (copied from its
Provider, ``runtimeConfigRef`` defaulting to ``default`` in the CRD), unless an
ImageConfig with ``spec.runtime.configRef`` matches the revision's resolved
source, the longest ``matchImages`` prefix winning (Crossplane v2.3.0
``internal/controller/pkg/runtime/reconciler.go:402-431``, crossplane-runtime
v2.3.0 ``pkg/xpkg/config.go:140-186``). The config's
``deploymentTemplate`` is the Deployment's base (``runtime.go:199-203``), so
the args of its container named ``package-runtime`` (``runtime.go:33-34``)
are the provider's flags.

Under ``--package-runtime=External`` the package manager copies none of this
onto revisions (``manager/reconciler.go:182-184``), so the lab's runtime reads
the Provider itself. It starts the provider binary with the config's flags,
plus the lab's own defaults for the flags the config does not set
(``merge_args``): a flag given twice would stop a kingpin program at start.
Pure functions over plain objects; ``package_runtime`` does the reads.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

CONTAINER = "package-runtime"
DEFAULT_CONFIG = "default"


def config_name(package: Mapping[str, Any] | None, image_configs: Iterable[Mapping[str, Any]],
                resolved_source: str) -> str:
    """The DeploymentRuntimeConfig the Deployment runtime would use for ``package``'s revision."""
    best, longest = "", 0
    for ic in image_configs:
        spec = ic.get("spec") or {}
        ref = ((spec.get("runtime") or {}).get("configRef") or {}).get("name")
        if not ref:
            continue
        for m in spec.get("matchImages") or []:
            prefix = m.get("prefix") or ""
            if prefix and resolved_source.startswith(prefix) and len(prefix) > longest:
                best, longest = ref, len(prefix)
    if best:
        return best
    ref = ((package or {}).get("spec") or {}).get("runtimeConfigRef") or {}
    return ref.get("name") or DEFAULT_CONFIG


def container_args(config: Mapping[str, Any] | None) -> list[str]:
    """The args of the config's ``package-runtime`` container (none: ``[]``)."""
    template = (((config or {}).get("spec") or {}).get("deploymentTemplate") or {})
    containers = ((template.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or []
    for c in containers:
        if c.get("name") == CONTAINER:
            return [str(a) for a in c.get("args") or []]
    return []


def flag_name(arg: str) -> str:
    """``--poll=1m`` -> ``poll``; ``--no-debug`` -> ``debug``; a value or short flag -> ``""``."""
    if not arg.startswith("--"):
        return ""
    name = arg[2:].split("=", 1)[0]
    return name.removeprefix("no-")


def merge_args(lab: Iterable[str], config: Iterable[str]) -> list[str]:
    """The lab's flags the config does not name, then the config's. Flags are ``--name=value`` or
    bare booleans (what a runtime config's args are; a separate value word is kept with its flag
    only in ``config``)."""
    config = list(config)
    named = {flag_name(a) for a in config} - {""}
    return [a for a in lab if flag_name(a) not in named] + config
