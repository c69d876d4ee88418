"""Where the upstream programs are: crossplane, etcd, kube-apiserver, kubectl, ...

``make tools`` (hack/tools.sh) builds pinned upstream programs from their Go
modules into a cache outside the repository and lists them in a manifest,
``$MODELPLANE_TOOLS_DIR/tools.json`` (default ``~/.cache/modelplane/tools``):
``{"<name>": "<absolute path>"}``. Every test and the lab find a program here:

    tools.find("kube-apiserver")      -> Path or None
    tools.missing("etcd", "kubectl")  -> None, or one skip reason naming `make tools`

``<NAME>_BIN`` (``KUBE_APISERVER_BIN``, ``CROSSPLANE_BIN``...) overrides the
manifest for one program, so a binary from elsewhere can be tried without a build.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

# The programs `make tools` knows (the manifest may hold a subset: built ones only).
KNOWN = (
    "crossplane", "etcd", "kube-apiserver", "kubectl", "kube-controller-manager", "kube-scheduler",
    "kwok", "crossplane-core", "provider-kubernetes", "provider-helm", "lws", "traefik",
)


def tools_dir() -> Path:
    """The tool cache: ``$MODELPLANE_TOOLS_DIR`` or ``~/.cache/modelplane/tools``."""
    env = os.environ.get("MODELPLANE_TOOLS_DIR")
    return Path(env) if env else Path.home() / ".cache" / "modelplane" / "tools"


def env_var(name: str) -> str:
    """The override variable for a program: ``kube-apiserver`` -> ``KUBE_APISERVER_BIN``."""
    return name.upper().replace("-", "_") + "_BIN"


def manifest() -> dict[str, str]:
    """The cache's tools.json; {} when absent or unreadable (a half-written cache is no cache)."""
    try:
        data = json.loads((tools_dir() / "tools.json").read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find(name: str) -> Path | None:
    """The program ``name``: its ``<NAME>_BIN`` override, else the manifest's build, else None.

    An override that names no executable file is an error, not a silent fallback:
    the caller asked for that binary."""
    override = os.environ.get(env_var(name))
    if override:
        path = Path(override).expanduser()
        if not _runnable(path):
            raise FileNotFoundError(f"{env_var(name)}={override}: no executable file there (unset it to use "
                                    f"`make tools`'s build)")
        return path
    built = manifest().get(name)
    if built and _runnable(Path(built)):
        return Path(built)
    return None


def missing(*names: str) -> str | None:
    """None when every program is found, else one sentence for a skip reason."""
    absent = [n for n in names if find(n) is None]
    if not absent:
        return None
    return f"{', '.join(absent)} not built: run `make tools` (or set {env_var(absent[0])})"
