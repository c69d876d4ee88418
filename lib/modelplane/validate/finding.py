"""What the validator reports: a ``Problem`` (path + message) inside one schema
walk, and a ``Finding`` (a problem placed on a resource in a file).

Paths are Kubernetes field paths: ``spec.engines[0].members[1].worker.nodes``;
map entries read ``metadata.labels[app]``; the resource root is ``""``.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """One violation at one field path."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass(frozen=True, order=True)
class Finding:
    """A problem with one resource of one source file.

    ``resource`` reads ``Kind/name`` (``Kind/namespace/name`` when namespaced).
    ``missing_schema`` marks the "could not find CRD/XRD" outcome, which is not
    a validation failure of the resource itself.
    """

    source: str
    resource: str
    path: str
    message: str
    missing_schema: bool = False

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        field = f"{self.path}: " if self.path else ""
        return f"{where}{self.resource}: {field}{self.message}"


def child(path: str, key: str) -> str:
    """The path of property ``key`` below ``path``."""
    return f"{path}.{key}" if path else key


def index(path: str, i: int) -> str:
    """The path of list item ``i`` below ``path``."""
    return f"{path}[{i}]"


def entry(path: str, key: str) -> str:
    """The path of map entry ``key`` (additionalProperties) below ``path``."""
    return f"{path}[{key}]"


def show(value: object, limit: int = 80) -> str:
    """A short JSON-ish rendering of a value for messages (objects and lists by type)."""
    import json

    if isinstance(value, dict):
        return '"object"'
    if isinstance(value, list):
        return '"array"'
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
