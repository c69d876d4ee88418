"""Which backends a namespace's ModelService routes carry, read from the request's wire bytes.

Every ModelDeployment requires every ModelService of its namespace
(``inputs.SERVICES``) to keep a replica while a route still carries it
(``drain``). A namespace of a thousand deployments has a thousand services,
and converting each to a dict on every call made a call's cost grow with the
namespace and a fleet's reconciles with its square: at 2,500 clusters and 500
deployments it was half of compose-model-deployment's time in ``simulate``.
So each item is read once for the two things that matter (its namespace and
``status.routedBackends``), kept by a digest of its bytes, and an entry the
request decoder recognised whole (``received.Items``) answers from the last
result for its version. ``inputs.read_routed`` is the same rule over dicts.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from google.protobuf import struct_pb2

from modelplane.pipeline.memo import DigestMemo
from modelplane.pipeline.received import KEPT_ENTRIES, decode_item

# One per ModelService version: a namespace has at most a few thousand.
CACHED_SERVICES = 20_000

# An item's namespace: None when it names none (it is then the deployment's own), NOT_A_NAME when
# the field holds something else than a string (it then matches no namespace, as with dicts).
NOT_A_NAME = object()
Routes = tuple[object, tuple[str, ...]]

_ITEMS: DigestMemo[Routes] = DigestMemo(CACHED_SERVICES)


class _ByVersion:
    """The last answers by (entry version, namespace)."""

    def __init__(self, limit: int) -> None:
        self._answers: OrderedDict[tuple[int, str], frozenset[str]] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def get(self, key: tuple[int, str]) -> frozenset[str] | None:
        with self._lock:
            hit = self._answers.get(key)
            if hit is not None:
                self._answers.move_to_end(key)
            return hit

    def put(self, key: tuple[int, str], answer: frozenset[str]) -> None:
        with self._lock:
            self._answers[key] = answer
            while len(self._answers) > self._limit:
                self._answers.popitem(last=False)


_ANSWERS = _ByVersion(KEPT_ENTRIES)


def routes(s: struct_pb2.Struct) -> Routes:
    """One ModelService's namespace and the backend names its routes report (strings only)."""
    meta = s.fields.get("metadata")
    namespace: object = None
    if meta is not None and meta.HasField("struct_value"):
        v = meta.struct_value.fields.get("namespace")
        if v is not None:
            namespace = v.string_value if v.HasField("string_value") else NOT_A_NAME
    names: tuple[str, ...] = ()
    status = s.fields.get("status")
    if status is not None and status.HasField("struct_value"):
        v = status.struct_value.fields.get("routedBackends")
        if v is not None and v.HasField("list_value"):
            names = tuple(n.string_value for n in v.list_value.values if n.HasField("string_value"))
    return namespace, names


def _read_item(item: bytes | memoryview) -> Routes:
    return routes(decode_item(item))


def read_routed_wire(items: Sequence[bytes | memoryview], namespace: str) -> frozenset[str]:
    """``inputs.read_routed`` of the items' resources; ValueError when an item does not decode."""
    version = getattr(items, "version", 0)
    if version:
        hit = _ANSWERS.get((version, namespace))
        if hit is not None:
            return hit
    out: set[str] = set()
    for ns, names in _ITEMS.get_all(list(items), _read_item):
        if ns is None or ns == namespace:   # tenancy: another team's routes never hold ours
            out.update(names)
    answer = frozenset(out)
    if version:
        _ANSWERS.put((version, namespace), answer)
    return answer
