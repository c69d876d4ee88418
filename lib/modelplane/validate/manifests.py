"""Reading manifests: multi-document YAML from files and directories.

Timestamps stay strings (YAML 1.1 would turn ``2024-01-01T00:00:00Z`` into a
datetime, which Kubernetes never sees). Directories are walked recursively in
sorted order; files not ending in .yaml/.yml are skipped.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from modelplane import paths as where

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc, valid-type]
    """A safe loader that keeps timestamps as strings."""


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in _Base.yaml_implicit_resolvers.items()
}



@dataclass(frozen=True)
class Document:
    """One YAML document and where it came from (``file`` and 0-based index)."""

    source: str
    index: int
    body: Any


def load_text(text: str) -> list[Any]:
    """Every non-empty document of a YAML stream."""
    return [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]


def load_file(path: Path) -> list[Any]:
    """Every non-empty document of a YAML file."""
    return load_text(Path(path).read_text(encoding="utf-8"))


def yaml_files(paths: Iterable[Path | str]) -> Iterator[Path]:
    """YAML files named by ``paths`` (directories recursively, sorted)."""
    for p in paths:
        yield from where.yaml_files(p)


def documents(paths: Iterable[Path | str]) -> Iterator[Document]:
    """Every document in the YAML files named by ``paths``."""
    for f in yaml_files(paths):
        for i, body in enumerate(load_file(f)):
            yield Document(str(f), i, body)
