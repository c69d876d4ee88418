"""Stable, DNS-safe names for everything Modelplane composes.

Invariants: a name is a DNS-1123 label (lowercase alphanumerics and '-',
starting and ending alphanumeric, at most 63 characters); the same parts
always give the same name; parts that differ give different names even when
truncated, because a truncated name carries a hash of the whole.
"""
from __future__ import annotations

import hashlib
import re

MAX_LABEL = 63
_INVALID = re.compile(r"[^a-z0-9-]+")
_DASHES = re.compile(r"-{2,}")


def _hash(text: str, n: int = 8) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def dns_label(*parts: object, max_length: int = MAX_LABEL) -> str:
    """Join parts into one DNS-1123 label of at most ``max_length`` chars.

    Parts already valid and short enough are joined with '-' unchanged. Any
    other input is lowercased, invalid runs become '-', and the result is cut
    to fit with 8 hex of sha256 of the raw joined parts appended, so two
    different inputs never collapse onto the same name.
    """
    raw = "-".join(str(p) for p in parts if str(p) != "")
    if len(raw) <= max_length and is_dns_label(raw):
        return raw
    clean = _DASHES.sub("-", _INVALID.sub("-", raw.lower())).strip("-")
    suffix = _hash(raw)
    head = clean[: max_length - len(suffix) - 1].rstrip("-")
    return f"{head}-{suffix}" if head else suffix


def is_dns_label(name: str) -> bool:
    """True when ``name`` is a valid DNS-1123 label."""
    return bool(re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", name))


def replica_name(deployment: str, index: int, cluster: str) -> str:
    """The ModelReplica (and its ModelEndpoint) name: deployment, ordinal, cluster.

    The cluster is part of the name so that moving a replica is a delete and a
    create: the remote objects under the old cluster's provider config are
    removed, never orphaned.
    """
    return dns_label(deployment, index, cluster)


def cache_pvc_name(cache: str) -> str:
    """The ReadWriteMany PVC a ModelCache hydrates on each workload cluster."""
    return dns_label("modelcache", cache)
