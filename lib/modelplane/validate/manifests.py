"""Reading manifests: multi-document YAML from files and directories.

Timestamps stay strings (YAML 1.1 would turn ``2024-01-01T00:00:00Z`` into a
datetime, which Kubernetes never sees). Directories are walked recursively in
sorted order; files not ending in .yaml/.yml are skipped.

Read as ``kubectl`` reads (measured against kubectl and kube-apiserver
v1.35.4): UTF-8 or UTF-16 with a byte-order mark (UTF-32 with one too, which
go-yaml does not read: ``reader.decode``); a key given twice keeps its last
value (kubectl turns YAML into JSON before sending, so the server never sees
the duplicate); aliases within go-yaml's budget and never a cycle
(``reader.check_expansion``); nesting to 10,000 levels, go-yaml's limit.
``too_large`` is the API server's size limit.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from modelplane import paths as where
from modelplane.render import reader
from modelplane.render.nodes import EventComposer

# kube-apiserver refuses a request body over 3 MiB ("Request entity too large: limit is 3145728")
# and etcd, with its default --max-request-bytes, an object over 1.5 MiB ("etcdserver: request is
# too large"); a dry run (--dry-run=server) stops at the first, a real create at the second.
REQUEST_LIMIT = 3 * 1024 * 1024
STORAGE_LIMIT = 3 * 512 * 1024

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(EventComposer, _Base):  # type: ignore[misc, valid-type]
    """A safe loader that keeps timestamps as strings, composing without recursion to go-yaml's
    10,000 levels (``render.nodes``; libyaml's own composer recurses in C and can crash)."""


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
    """Every non-empty document of a YAML stream (``yaml.YAMLError`` when it does not parse, expands
    aliases beyond go-yaml's budget, refers to itself or nests too deeply)."""
    out: list[Any] = []
    try:
        out.extend(reader.check_expansion(d) for d in yaml.load_all(text, Loader=_Loader) if d is not None)
    except reader.YAMLLimitError as err:
        raise reader.located(err, text, len(out)) from None
    except RecursionError:
        raise reader.located(reader.YAMLLimitError("yaml: the document nests too deeply"), text, len(out)) from None
    return out


def load_file(path: Path) -> list[Any]:
    """Every non-empty document of a YAML file (UTF-8, or UTF-16 or UTF-32 with a byte-order mark)."""
    return load_text(reader.decode(Path(path).read_bytes()))


def too_large(doc: Any) -> str | None:
    """What the API server answers when ``doc`` (sent as JSON) is too large to create, else None."""
    try:
        size = len(json.dumps(doc, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):
        return None
    if size > REQUEST_LIMIT:
        return f"Request entity too large: limit is {REQUEST_LIMIT} ({size} bytes as JSON)"
    if size > STORAGE_LIMIT:
        return (f"etcdserver: request is too large ({size} bytes as JSON; etcd stores at most {STORAGE_LIMIT} "
                "by default: a dry run passes, a create fails)")
    return None


def yaml_files(paths: Iterable[Path | str]) -> Iterator[Path]:
    """YAML files named by ``paths`` (directories recursively, sorted)."""
    for p in paths:
        yield from where.yaml_files(p)


def documents(paths: Iterable[Path | str]) -> Iterator[Document]:
    """Every document in the YAML files named by ``paths``."""
    for f in yaml_files(paths):
        for i, body in enumerate(load_file(f)):
            yield Document(str(f), i, body)
