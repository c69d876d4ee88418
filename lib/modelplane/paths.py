"""Where things live: our XRDs and Compositions, the functions, the examples,
and the vendored upstream schemas; and which files of a folder are manifests.

An installed wheel carries its data inside the package (``modelplane/apis``,
``modelplane/schemas/upstream``); a source checkout keeps the same folders at
the repository root (``lib/modelplane`` is two levels below it). Both are
found the same way, so every command works from any working directory.
"""
from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
# The repository root of a source checkout (meaningless in an installed wheel).
ROOT = PACKAGE.parent.parent


def _data(name: str) -> Path:
    """``name`` inside the installed package, else at the checkout root."""
    inside = PACKAGE / name
    return inside if inside.is_dir() else ROOT / name


APIS = _data("apis")
FUNCTIONS = _data("functions")
SCHEMAS = _data("schemas")
# Examples are documentation, not package data: present in a checkout only.
EXAMPLES = ROOT / "examples"
UPSTREAM = SCHEMAS / "upstream"


YAML_SUFFIXES = (".yaml", ".yml")


def yaml_files(root: Path | str) -> list[Path]:
    """The YAML files of ``root``: the file itself, or every ``.yaml``/``.yml`` file below a
    directory, recursively, in path order (so whatever loads them loads them the same way)."""
    root = Path(root)
    if not root.is_dir():
        return [root]
    return sorted(p for p in root.rglob("*") if p.suffix in YAML_SUFFIXES and p.is_file())


def crds_dir() -> Path:
    """The folder of upstream CRD schemas and Kubernetes OpenAPI documents.

    ``$MODELPLANE_CRDS`` overrides the vendored copy (``schemas/upstream``)."""
    env = os.environ.get("MODELPLANE_CRDS")
    return Path(env) if env else UPSTREAM
