"""Which backends a namespace's ModelService routes carry, read from the request's wire bytes.

Every ModelDeployment requires every ModelService of its namespace
(``inputs.SERVICES``) to keep a replica while a route still carries it
(``drain``). A namespace of a thousand deployments has a thousand services,
and converting each to a dict on every call made a call's cost grow with the
namespace and a fleet's reconciles with its square: at 2,500 clusters and 500
deployments it was half of compose-model-deployment's time in ``simulate``.
So each item is read once for the two things that matter (its namespace and
``status.routedBackends``), kept by a digest of its bytes, and the answer for
an entry the request decoder recognised whole is kept with its items
(``received.Items.derived``). ``inputs.read_routed`` is the same rule over dicts.
"""
from __future__ import annotations

from collections.abc import Sequence

from google.protobuf import struct_pb2

from modelplane.pipeline.memo import DigestMemo
from modelplane.pipeline.received import Items, decode_item

# One per ModelService version: a namespace has at most a few thousand.
CACHED_SERVICES = 20_000

# An item's namespace: None when it names none (it is then the deployment's own), NOT_A_NAME when
# the field holds something else than a string (it then matches no namespace, as with dicts).
NOT_A_NAME = object()
Routes = tuple[object, tuple[str, ...]]

_ITEMS: DigestMemo[Routes] = DigestMemo(CACHED_SERVICES)


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
    if isinstance(items, Items):
        return items.derived((read_routed_wire, namespace), lambda whole: _routed(whole, namespace))
    return _routed(items, namespace)


def _routed(items: Sequence[bytes | memoryview], namespace: str) -> frozenset[str]:
    out: set[str] = set()
    for ns, names in _ITEMS.get_all(list(items), _read_item):
        if ns is None or ns == namespace:   # tenancy: another team's routes never hold ours
            out.update(names)
    return frozenset(out)
