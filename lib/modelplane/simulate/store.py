"""The simulated API server's read side: answer required-resource selectors, and watch them.

``Store`` indexes every object a function may require (XRs with their status,
and the directory's other objects) by apiVersion/kind and by label, and
keeps each object's protobuf ``Resource`` until the object changes: a
ModelDeployment's render asks for every InferenceCluster, and converting a
thousand clusters to protobuf for every render would cost more than the
render itself.

Selection is classic render's, in the engine's (CLI >= v2.3) namespace reading
(``modelplane.render.fetch``): candidates sorted by name; ``match_name`` the
first with that name; ``match_labels`` all carrying the labels; a selector's
namespace must equal the object's, and a namespaced XR's selectors without
one look in the XR's namespace, except label selectors (every namespace) and
cluster-scoped objects.

``Watches`` records which XR read what (its selectors), so a change to an
object marks exactly the XRs whose selectors match it before or after the
change: the watch-driven part of the reconcile loop.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.pipeline.structwire import struct_bytes
from modelplane.render.wire import field as wire_field

Key = tuple[str, str, str]
Kind = tuple[str, str]          # apiVersion, kind


@dataclass(frozen=True)
class Selector:
    api_version: str
    kind: str
    namespace: str | None = None
    name: str | None = None
    labels: tuple[tuple[str, str], ...] | None = None   # None: not a label selector

    @classmethod
    def of(cls, sel: fnv1.ResourceSelector) -> Selector:
        match = sel.WhichOneof("match")
        return cls(
            api_version=sel.api_version, kind=sel.kind,
            namespace=sel.namespace if sel.HasField("namespace") else None,
            name=sel.match_name if match == "match_name" else None,
            labels=tuple(sorted(sel.match_labels.labels.items())) if match == "match_labels" else None,
        )

    def namespace_ok(self, obj_ns: str, xr_ns: str) -> bool:
        want = self.namespace
        if want is None and not obj_ns:
            return True   # a cluster-scoped object: there is no namespace to default to
        if want is None and self.labels is None:
            want = xr_ns
        return want is None or obj_ns == want

    def matches(self, obj: Mapping[str, Any], xr_ns: str) -> bool:
        """Whether ``obj`` is among what this selector can return (name: any of that name)."""
        if obj.get("apiVersion") != self.api_version or obj.get("kind") != self.kind:
            return False
        meta = obj.get("metadata") or {}
        if not self.namespace_ok(meta.get("namespace", ""), xr_ns):
            return False
        if self.name is not None:
            return meta.get("name", "") == self.name
        if self.labels:
            have = meta.get("labels") or {}
            return all(have.get(k) == v for k, v in self.labels)
        return True


def _kind(obj: Mapping[str, Any]) -> Kind:
    return obj.get("apiVersion", ""), obj.get("kind", "")


def _order(key: Key) -> tuple[str, str]:
    return key[2], key[1]


class Store:
    """Objects by kind and label, with their protobuf form cached per version."""

    def __init__(self) -> None:
        self._objs: dict[Kind, dict[Key, Mapping[str, Any]]] = {}
        self._labels: dict[Kind, dict[tuple[str, str], set[Key]]] = {}
        self._sorted: dict[Kind, list[Key]] = {}
        self._wire: dict[Key, bytes] = {}       # each object as one ``Resources.items`` entry, tag included
        self._kinds: dict[Key, Kind] = {}
        # Each kind's version, moved on by every write to an object of that kind; and what each
        # selector answered at a version: a wave of deployments that all require every
        # InferenceCluster is answered from one join, not one select and join per render.
        self._versions: dict[Kind, int] = {}
        self._answers: dict[tuple[Selector, str], tuple[int, bytes]] = {}

    def put(self, key: Key, obj: Mapping[str, Any]) -> None:
        kind = _kind(obj)
        objs = self._objs.setdefault(kind, {})
        old = objs.get(key)
        if old is None:
            self._sorted.pop(kind, None)
        else:
            self._unlabel(kind, key, old)
        objs[key] = obj
        self._kinds[key] = kind
        self._versions[kind] = self._versions.get(kind, 0) + 1
        for pair in ((obj.get("metadata") or {}).get("labels") or {}).items():
            self._labels.setdefault(kind, {}).setdefault(pair, set()).add(key)
        self._wire.pop(key, None)

    def get(self, key: Key) -> Mapping[str, Any] | None:
        kind = self._kinds.get(key)
        return self._objs[kind].get(key) if kind else None

    def remove(self, key: Key, obj: Mapping[str, Any]) -> None:
        kind = _kind(obj)
        if self._objs.get(kind, {}).pop(key, None) is not None:
            self._unlabel(kind, key, obj)
            self._sorted.pop(kind, None)
            self._versions[kind] = self._versions.get(kind, 0) + 1
        self._kinds.pop(key, None)
        self._wire.pop(key, None)

    def _unlabel(self, kind: Kind, key: Key, obj: Mapping[str, Any]) -> None:
        for pair in ((obj.get("metadata") or {}).get("labels") or {}).items():
            self._labels.get(kind, {}).get(pair, set()).discard(key)

    def _keys(self, kind: Kind) -> list[Key]:
        keys = self._sorted.get(kind)
        if keys is None:
            keys = self._sorted[kind] = sorted(self._objs.get(kind, {}), key=_order)
        return keys

    def select(self, sel: Selector, xr_ns: str) -> list[Key]:
        kind = (sel.api_version, sel.kind)
        objs = self._objs.get(kind, {})
        keys: Iterable[Key] = self._keys(kind)
        if sel.labels:
            first = self._labels.get(kind, {}).get(sel.labels[0], set())
            keys = sorted(first, key=_order)
        out = []
        for key in keys:
            if sel.matches(objs[key], xr_ns):
                out.append(key)
                if sel.name is not None:
                    break
        return out

    def _item(self, key: Key) -> bytes:
        wire = self._wire.get(key)
        if wire is None:
            # A Resource whose field 1 (resource) is the object's Struct; as one entry of field 1
            # (items) of Resources.
            body = wire_field(1, struct_bytes(dict(self._objs[self._kinds[key]][key])))
            wire = self._wire[key] = wire_field(1, body)
        return wire

    def fetch_wire(self, sel: Selector, xr_ns: str) -> bytes:
        """The selected objects as the wire bytes of the Resources message a request carries.

        Each object is serialised once per version; a request is assembled from
        these bytes (``modelplane.render.wire``), so a thousand InferenceClusters
        cost a join, not a thousand conversions nor a parse; and the same bytes
        object answers the selector until an object of its kind changes."""
        version = self._versions.get((sel.api_version, sel.kind), 0)
        known = self._answers.get((sel, xr_ns))
        if known is not None and known[0] == version:
            return known[1]
        wire = b"".join([self._item(k) for k in self.select(sel, xr_ns)])
        self._answers[(sel, xr_ns)] = (version, wire)
        return wire

    def fetch(self, sel: Selector, xr_ns: str) -> fnv1.Resources:
        """``fetch_wire`` as a message."""
        return fnv1.Resources.FromString(self.fetch_wire(sel, xr_ns))


class Watches:
    """Which XR's selectors would return which objects.

    Label selectors are indexed by their first label, so a change to one of a
    thousand ModelReplicas wakes the one InferenceCluster whose label it
    carries without testing the other 999 selectors.
    """

    def __init__(self) -> None:
        self._by_xr: dict[Key, tuple[tuple[Selector, str], ...]] = {}
        self._plain: dict[Kind, dict[Key, list[tuple[Selector, str]]]] = {}
        self._labelled: dict[tuple[Kind, tuple[str, str]], dict[Key, list[tuple[Selector, str]]]] = {}

    def _slot(self, sel: Selector) -> dict[Key, list[tuple[Selector, str]]]:
        kind = (sel.api_version, sel.kind)
        if sel.labels:
            return self._labelled.setdefault((kind, sel.labels[0]), {})
        return self._plain.setdefault(kind, {})

    def record(self, xr: Key, reads: Iterable[tuple[Selector, str]]) -> None:
        self.forget(xr)
        reads = tuple(sorted(set(reads), key=repr))
        self._by_xr[xr] = reads
        for sel, ns in reads:
            self._slot(sel).setdefault(xr, []).append((sel, ns))

    def forget(self, xr: Key) -> None:
        for sel, _ in self._by_xr.pop(xr, ()):
            self._slot(sel).pop(xr, None)

    def readers(self, *objs: Mapping[str, Any] | None, blind: frozenset[str] = frozenset()) -> set[Key]:
        """XRs that read any of ``objs`` (an object's state before and after a change), except those of
        the kinds in ``blind``."""
        out: set[Key] = set()
        for obj in objs:
            if not obj:
                continue
            kind = _kind(obj)
            slots = [self._plain.get(kind, {})]
            for pair in ((obj.get("metadata") or {}).get("labels") or {}).items():
                slot = self._labelled.get((kind, pair))
                if slot:
                    slots.append(slot)
            for slot in slots:
                for xr, sels in slot.items():
                    if xr not in out and xr[0] not in blind and any(sel.matches(obj, ns) for sel, ns in sels):
                        out.add(xr)
        return out
