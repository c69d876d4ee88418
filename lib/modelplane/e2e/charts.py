"""Stand-in Helm charts in provider-helm's chart cache.

provider-helm keeps pulled charts in a fixed folder, ``/tmp/charts``, and
loads ``<name>-<version>.tgz`` from there without contacting the repository
(provider-helm v1.3.0 ``pkg/clients/helm/client.go``). The charts Modelplane
pins live on registries this machine cannot reach, so the lab puts a small
chart under each pinned name and version: provider-helm then installs it for
real (a Helm release on the workload cluster, its objects applied) and the
Release reports the real provider's conditions. The chart holds one
ConfigMap saying what it stands in for; the workloads' CRDs and controllers
come from the lab itself.
"""
from __future__ import annotations

import gzip
import io
import tarfile
from collections.abc import Iterable
from pathlib import Path

import yaml

from modelplane.platform import control_plane, stack

CACHE = Path("/tmp/charts")
ANNOTATION = "modelplane.ai/lab-stand-in"


def pinned() -> list[tuple[str, str, str]]:
    """(name, version, repository) of every chart Modelplane composes a Release for, sorted."""
    out = {(ch.name, comp.version, ch.repository) for comp in stack.COMPONENTS for ch in comp.charts}
    for chart in (control_plane.ENVOY, control_plane.METALLB):
        out.add((chart["name"], chart["version"], chart["repository"]))
    return sorted(out)


def chart_files(name: str, version: str, repository: str) -> dict[str, bytes]:
    meta = {"apiVersion": "v2", "name": name, "version": version, "type": "application",
            "description": f"Modelplane lab stand-in for {repository}/{name} {version}",
            "annotations": {ANNOTATION: "true"}}
    template = (
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        "  name: {{ .Release.Name }}-lab-stand-in\n"
        f"  labels:\n    {ANNOTATION}: \"true\"\n"
        "data:\n"
        f"  chart: {name}\n"
        f"  version: \"{version}\"\n"
        f"  repository: \"{repository}\"\n"
    )
    return {f"{name}/Chart.yaml": yaml.safe_dump(meta, sort_keys=False).encode(),
            f"{name}/templates/stand-in.yaml": template.encode()}


def archive(files: dict[str, bytes]) -> bytes:
    """A deterministic .tgz (fixed mtimes and owners: the same bytes every run)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            info = tarfile.TarInfo(path)
            info.size, info.mtime, info.mode = len(files[path]), 0, 0o644
            tar.addfile(info, io.BytesIO(files[path]))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def seed(charts: Iterable[tuple[str, str, str]] | None = None, cache: Path = CACHE) -> list[Path]:
    """Write each stand-in as ``<cache>/<name>-<version>.tgz``; returns the paths."""
    cache.mkdir(parents=True, exist_ok=True)
    out = []
    for name, version, repository in (pinned() if charts is None else charts):
        path = cache / f"{name}-{version}.tgz"
        path.write_bytes(archive(chart_files(name, version, repository)))
        out.append(path)
    return out
