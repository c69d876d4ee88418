"""The InferenceClusters compose-model-deployment reads, as the scheduler's dataclasses.

Clusters are the big input: every call gets every InferenceCluster the
deployment's selector matches (1,000 clusters x pools x allocations is a
2 MB request), and most calls see almost all of them unchanged since the
previous call. So each cluster is read once per *version*: what the
scheduler needs of it (``Facts``: name, labels, readiness, taints, pools and
their allocations, what a ModelReplica needs, when it last changed) is kept
by a digest of its wire bytes, as the request brought them
(``modelplane.pipeline.received``: a cached version is never decoded at all), and a
call only turns the facts into this deployment's view (its own observed
replicas are left out of the allocations, its terminating ones marked).
The cache is bounded and shared by the server's worker threads; two calls
racing on one version both read it, which is harmless.

Most often the whole list arrives as it did before (every deployment of the
fleet gets the same clusters; nothing changed since): the request decoder
then hands over the very same items (``received.Items``, one version), and
the fleet as read from them is kept with them (``_Fleet``, ``Items.derived``):
the clusters sorted, those not Ready, and which clusters each deployment is
allocated on. Such a
call does no work per cluster at all: only the clusters its deployment is on
get a view of their own (10,000 clusters: 55 ms -> 5 ms in-process).

Capacity: a pool's allocations list every ModelReplica on it, ours
included. Ours that are observed children are skipped here (the scheduler
accounts for them from the observed ModelReplicas, at their own admission
keys); ours that are not (dropped on an earlier call, still terminating:
their pods hold devices until they are gone) count like anyone else's, and
their indexes are ``Terminating`` so no new replica reuses the name.
"""
from __future__ import annotations

import bisect
import sys
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from google.protobuf import struct_pb2

from modelplane.errors import InputError
from modelplane.pipeline.memo import DigestMemo
from modelplane.pipeline.received import Items, decode_item
from modelplane.scheduler import Allocation, Cluster, PodGroup, Pool, Taint

# Versions of clusters kept: a 5,000-cluster fleet, with room for the versions a busy fleet writes.
CACHED_VERSIONS = 20_000


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """What a ModelReplica needs to know about its cluster (spec.cluster)."""

    provider_config: str
    gateway: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Facts:
    """One version of one InferenceCluster, as every deployment reads it."""

    cluster: Cluster                 # every allocation as it is: the view of any deployment with none here
    info: ClusterInfo
    since: str                       # the Ready condition's last transition, else creation; "" if neither
    # ``namespace/name`` of every deployment allocated on the cluster, sorted: a few, so a tuple
    # (a frozenset costs about 200 bytes more: 4 MB at 10,000 clusters)
    deployments: tuple[str, ...]


# --- reading one Struct --------------------------------------------------------
# Struct access: work on the ``fields`` maps and read typed members directly
# (a missing or differently typed value reads as its zero value); ``get``
# never inserts into the request, unlike indexing a protobuf map.
Fields = Mapping[str, struct_pb2.Value]
_NONE: Fields = {}
# Names, labels, classes and deployments repeat across thousands of clusters: one string object
# each (a server holding 10,000 clusters' facts: 55 -> 46 MB).
_intern = sys.intern


def _m(f: Fields, key: str) -> Fields:
    v = f.get(key)
    return v.struct_value.fields if v is not None else _NONE


def _l(f: Fields, key: str) -> Sequence[struct_pb2.Value]:
    v = f.get(key)
    return v.list_value.values if v is not None else ()


def _s(f: Fields, key: str) -> str:
    v = f.get(key)
    return _intern(v.string_value) if v is not None else ""


def _n(f: Fields, key: str) -> int:
    v = f.get(key)
    return int(v.number_value) if v is not None else 0


def _strings(f: Fields) -> dict[str, str]:
    return {_intern(k): _intern(v.string_value) for k, v in f.items()}


def _ready(status: Fields) -> tuple[bool, str]:
    for v in _l(status, "conditions"):
        cond = v.struct_value.fields
        if _s(cond, "type") == "Ready":
            if _s(cond, "status") == "True":
                return True, ""
            return False, _s(cond, "reason") or _s(cond, "message")
    return False, "no Ready condition yet"


def _since(status: Fields, meta: Fields) -> str:
    for v in _l(status, "conditions"):
        cond = v.struct_value.fields
        if _s(cond, "type") == "Ready" and _s(cond, "lastTransitionTime"):
            return _s(cond, "lastTransitionTime")
    return _s(meta, "creationTimestamp")


def _pods(alloc: Fields) -> tuple[PodGroup, ...]:
    out = []
    for v in _l(alloc, "pods"):
        g = v.struct_value.fields
        gang = g.get("gang")
        out.append(PodGroup(
            count=_n(g, "count"),
            devices={_intern(k): int(d.number_value) for k, d in sorted(_m(g, "devices").items())},
            gang=gang.bool_value if gang is not None else False,
        ))
    return tuple(out)


def _allocations(pool: Fields) -> tuple[Allocation, ...]:
    return tuple(
        Allocation(replica=_s(a, "replica"), deployment=_s(a, "deployment"), order=_s(a, "order"), pods=_pods(a))
        for a in (v.struct_value.fields for v in _l(pool, "allocations")))


def facts(s: struct_pb2.Struct) -> Facts:
    """Read one InferenceCluster Struct (uncached)."""
    f = s.fields
    meta, spec, status = _m(f, "metadata"), _m(f, "spec"), _m(f, "status")
    name = _s(meta, "name")
    ready, why = _ready(status)
    taints = tuple(
        Taint(key=_s(t, "key"), value=_s(t, "value"), effect=_s(t, "effect") or "NoSchedule")
        for t in (v.struct_value.fields for v in _l(spec, "taints"))
    )
    pools = None
    if "pools" in status:
        pools = tuple(Pool(name=_s(p, "name"), class_name=_s(p, "class"), nodes=_n(p, "nodes"),
                           allocations=_allocations(p))
                      for p in (v.struct_value.fields for v in _l(status, "pools")))
    return Facts(
        cluster=Cluster(name=name, labels=_strings(_m(meta, "labels")), ready=ready, not_ready_reason=why,
                        taints=taints, pools=pools),
        deployments=tuple(sorted({a.deployment for p in pools or () for a in p.allocations})),
        info=ClusterInfo(provider_config=_s(status, "providerConfigName") or name,
                         gateway=_strings(_m(status, "gateway"))),
        since=_since(status, meta),
    )


_CACHE: DigestMemo[Facts] = DigestMemo(CACHED_VERSIONS)


# --- one deployment's view -------------------------------------------------------


class Allocations(Sequence[Allocation]):
    """A pool's allocations as one deployment sees them: all but its observed
    replicas, its terminating ones marked as another deployment's (the
    scheduler skips its own key when replaying). Filtered on first use:
    only pools whose class fits the deployment are ever replayed. Compares
    equal to the same allocations in a tuple."""

    __slots__ = ("_all", "_items", "_live", "_own")

    def __init__(self, allocations: tuple[Allocation, ...], own: str, live: Container[str] = frozenset()) -> None:
        self._all: tuple[Allocation, ...] | None = allocations
        self._own = own
        self._live = live
        self._items: tuple[Allocation, ...] = ()

    def _read(self) -> tuple[Allocation, ...]:
        if self._all is not None:
            own, live = self._own, self._live
            self._items = tuple(
                a if a.deployment != own else Allocation(replica=a.replica, deployment=f"{own} (terminating)",
                                                         order=a.order, pods=a.pods)
                for a in self._all if a.deployment != own or a.replica not in live)
            self._all = None
        return self._items

    def __getitem__(self, i):  # type: ignore[override]
        return self._read()[i]

    def __len__(self) -> int:
        return len(self._read())

    def __iter__(self) -> Iterator[Allocation]:
        return iter(self._read())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Allocations):
            other = other._read()
        return self._read() == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._read())


def _view(f: Facts, own: str, live: Container[str]) -> Cluster:
    c = f.cluster
    if c.pools is None or own not in f.deployments:
        return c   # nothing of ours to leave out or mark: the shared view (most clusters)
    pools = tuple(Pool(name=p.name, class_name=p.class_name, nodes=p.nodes,
                       allocations=Allocations(tuple(p.allocations), own, live)) for p in c.pools)
    return Cluster(name=c.name, labels=c.labels, ready=c.ready, not_ready_reason=c.not_ready_reason,
                   taints=c.taints, pools=pools)


class ClusterInfos(Mapping[str, ClusterInfo]):
    """Cluster name -> ClusterInfo; ``since`` tells when each last changed, ``clusters`` finds a
    cluster by name and ``down`` names those not Ready (worked out once per version of the fleet)."""

    def __init__(self, read: Mapping[str, Facts], down: frozenset[str] | None = None) -> None:
        self._facts = read
        self.clusters: Mapping[str, Cluster] = _ByName(read)
        self.down = down if down is not None else frozenset(n for n, f in read.items() if not f.cluster.ready)

    def __getitem__(self, name: str) -> ClusterInfo:
        return self._facts[name].info

    def __len__(self) -> int:
        return len(self._facts)

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)

    def since(self, name: str) -> str:
        """When the cluster's Ready condition last changed (RFC 3339), or,
        without one, when the cluster was created; "" when neither is known."""
        f = self._facts.get(name)
        return f.since if f is not None else ""


class _ByName(Mapping[str, Cluster]):
    """Cluster name -> the cluster as any deployment sees it (its readiness and pools; not a
    deployment's own view of the allocations)."""

    def __init__(self, read: Mapping[str, Facts]) -> None:
        self._facts = read

    def __getitem__(self, name: str) -> Cluster:
        return self._facts[name].cluster

    def __len__(self) -> int:
        return len(self._facts)

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)


def _read_item(item: bytes | memoryview) -> Facts:
    return facts(_decode(item))


def _decode(item: bytes) -> struct_pb2.Struct:
    try:
        return decode_item(item)
    except ValueError as err:
        raise InputError("spec.clusterSelector", f"a selected InferenceCluster {err}; "
                         "fix or exclude that cluster") from None


def read_clusters(items: Iterable[bytes | memoryview], own: str,
                  live: Container[str] = frozenset()) -> tuple[tuple[Cluster, ...], ClusterInfos, Terminating]:
    """The clusters sorted by name, what replicas need of each, and this
    deployment's terminating indexes. ``items`` are the wire bytes of each
    required InferenceCluster (a ``Resource`` message: ``Composition.required_wire``),
    decoded only when this version is not cached. ``live`` holds
    ``namespace/name`` of this deployment's observed ModelReplicas."""
    fleet = items.derived(_Fleet, _Fleet.read) if isinstance(items, Items) else _Fleet.read(items)
    return fleet.view(own, live)


class _Fleet:
    """One version of the whole list of clusters, as every deployment reads it: the facts by
    name, the shared views, and where each deployment is allocated (only those clusters get a
    view of their own).

    A version that differs from the one before in a few items (``Items.earlier``) is that one
    with those clusters read again: the rest is not hashed, looked up or sorted again."""

    __slots__ = ("_positions", "clusters", "down", "facts", "names", "on")

    def __init__(self, facts: dict[str, Facts], clusters: tuple[Cluster, ...], on: dict[str, list[int]],
                 down: frozenset[str], names: list[str] | None) -> None:
        self.facts = facts          # by name, sorted
        self.clusters = clusters    # in that order
        self.on = on                # deployment -> the indexes (ascending) of the clusters it is allocated on
        self.down = down
        self.names = names          # item index -> cluster name; None if an update by item cannot be trusted
        self._positions: dict[str, int] | None = None

    @classmethod
    def read(cls, items: Iterable[bytes | memoryview]) -> _Fleet:
        if isinstance(items, Items):
            earlier = items.earlier(_Fleet)
            if earlier is not None:
                fleet = earlier[0].updated(items, earlier[1])  # type: ignore[attr-defined]
                if fleet is not None:
                    return fleet
        every = _CACHE.get_all(list(items), _read_item)
        names = [f.cluster.name for f in every]
        read = {name: f for name, f in zip(names, every) if name}
        facts = dict(sorted(read.items()))
        on: dict[str, list[int]] = {}
        for i, f in enumerate(facts.values()):
            for d in f.deployments:
                on.setdefault(d, []).append(i)
        down = frozenset(n for n, f in facts.items() if not f.cluster.ready)
        # A name twice (the last one counts) or an unnamed item: which item is which cluster is ambiguous.
        trusted = names if len(facts) == len(names) else None
        return cls(facts, tuple(f.cluster for f in facts.values()), on, down, trusted)

    def updated(self, items: Sequence[bytes | memoryview], changed: Sequence[int]) -> _Fleet | None:
        """This fleet with the items at ``changed`` read again (every other item is byte for byte
        the one this fleet read at its index); None when that cannot be done by item (a changed
        item names another cluster, or this fleet's names are ambiguous)."""
        names = self.names
        if names is None or len(items) != len(names):
            return None
        if not changed:
            return self
        fresh = _CACHE.get_all([items[k] for k in changed], _read_item)
        if any(f.cluster.name != names[k] for k, f in zip(changed, fresh)):
            return None
        if self._positions is None:
            self._positions = {name: i for i, name in enumerate(self.facts)}
        positions = self._positions
        facts = dict(self.facts)
        clusters = list(self.clusters)
        on = dict(self.on)
        copied: set[str] = set()
        down = set(self.down)
        for f in fresh:
            name = f.cluster.name
            i = positions[name]
            old = facts[name]
            facts[name] = f
            clusters[i] = f.cluster
            if old.deployments != f.deployments:
                for d in {*old.deployments, *f.deployments}:
                    if d not in copied:
                        copied.add(d)
                        on[d] = list(on.get(d, ()))
                    where = on[d]
                    if i in where and d not in f.deployments:
                        where.remove(i)
                    elif i not in where and d in f.deployments:
                        bisect.insort(where, i)
            if f.cluster.ready:
                down.discard(name)
            else:
                down.add(name)
        for d in copied:
            if not on[d]:
                del on[d]    # as a fleet read whole: only deployments allocated somewhere
        fleet = _Fleet(facts, tuple(clusters), on, frozenset(down), names)
        fleet._positions = positions   # the same names in the same order
        return fleet

    def view(self, own: str, live: Container[str]) -> tuple[tuple[Cluster, ...], ClusterInfos, Terminating]:
        mine = self.on.get(own, ())
        clusters = self.clusters
        if mine:
            facts = tuple(self.facts.values())
            views = list(clusters)
            for i in mine:
                views[i] = _view(facts[i], own, live)
            clusters = tuple(views)
            here: Iterable[Facts] = [facts[i] for i in mine]
        else:
            here = ()
        return clusters, ClusterInfos(self.facts, self.down), Terminating(here, own, live)


class Terminating(Container[int]):
    """Indexes of this deployment's ModelReplicas that the clusters still
    list in ``status.pools`` but that are no longer observed children (being
    deleted). Worked out on first use: only a call that places a new replica
    asks."""

    def __init__(self, read: Iterable[Facts], own: str, live: Container[str]) -> None:
        self._read_from: Iterable[Facts] | None = read
        self._own = own
        self._live = live
        self._indexes: frozenset[int] = frozenset()

    def _read(self) -> frozenset[int]:
        if self._read_from is not None:
            found = set()
            for f in self._read_from:
                for p in f.cluster.pools or ():
                    for a in p.allocations:
                        if a.deployment == self._own and a.replica not in self._live:
                            # The admission key ends with the index: ".../{index:05d}".
                            tail = a.order.rsplit("/", 1)[-1]
                            if tail.isdigit():
                                found.add(int(tail))
            self._indexes = frozenset(found)
            self._read_from = None
        return self._indexes

    def __contains__(self, index: object) -> bool:
        return index in self._read()
