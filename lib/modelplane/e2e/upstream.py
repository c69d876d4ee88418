"""The upstream programs the control plane runs, and the module sources beside them.

Binaries come from the tool cache (``modelplane.kube.tools``, ``make tools``). Some
pieces are not in the binary: Crossplane's core CRDs (``cluster/crds``) and the
providers' package metadata and CRDs (``package/``). They are read from the Go
module cache, at the version the cached build was made from: the tool cache
names each build's folder ``<name>-<version>``.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from modelplane.kube import tools

# tool name -> Go module path (the module whose version names the build folder).
MODULES = {
    "crossplane-core": "github.com/crossplane/crossplane/v2",
    "provider-kubernetes": "github.com/crossplane-contrib/provider-kubernetes",
    "provider-helm": "github.com/crossplane-contrib/provider-helm",
}
_VERSIONED = re.compile(r"-(v\d+\.\d+\.\d+[^/]*)$")


class MissingTool(RuntimeError):
    """A program or module source the control plane needs is not on this machine."""


def binary(name: str) -> Path:
    """The program ``name`` from the tool cache; MissingTool with the fix when absent."""
    found = tools.find(name)
    if found is None:
        raise MissingTool(tools.missing(name))
    return found


def version(name: str) -> str:
    """The module version a cached build was made from (``provider-helm`` -> ``v1.3.0``).

    Read from the build folder's name; a ``<NAME>_BIN`` override outside the
    cache has no version, and that is an error here: the sources must match."""
    path = binary(name)
    m = _VERSIONED.search(path.parent.name)
    if not m:
        raise MissingTool(f"{name}: {path} is not a `make tools` build (<name>-<version>/{name}); "
                          f"unset {tools.env_var(name)} so the module sources can be matched to it")
    return m.group(1)


def gomodcache() -> Path:
    """``$GOMODCACHE``, else what ``go env`` says, else Go's default (``~/go/pkg/mod``)."""
    env = os.environ.get("GOMODCACHE")
    if env:
        return Path(env)
    go = shutil.which("go")
    if go:
        out = subprocess.run([go, "env", "GOMODCACHE"], capture_output=True, text=True, check=False).stdout.strip()
        if out:
            return Path(out)
    return Path(os.environ.get("GOPATH") or Path.home() / "go") / "pkg" / "mod"


def _escape(module: str) -> str:
    """The module cache's case encoding: an upper-case letter becomes ``!`` + lower case."""
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), module)


def source(name: str, *parts: str) -> Path:
    """A folder of the module ``name`` was built from, e.g. ``source("crossplane-core", "cluster", "crds")``."""
    where = gomodcache() / f"{_escape(MODULES[name])}@{version(name)}"
    path = where.joinpath(*parts)
    if not path.is_dir():
        raise MissingTool(f"{name}: {path} is missing (the module cache holds the sources `make tools` "
                          f"downloaded; run `make tools-{name}` again)")
    return path
