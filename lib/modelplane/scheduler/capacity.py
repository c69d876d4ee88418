"""Free capacity, counted in devices per node.

A pool of N nodes of class C is N identical nodes, each offering ``count``
of every DRA class device of C. Synthetic devices are not tracked: they are
never consumed. Nodes are not reported individually, so their fill is
reconstructed from the pool's allocations, replayed in admission order
(``order``, then replica name) with a deterministic first fit:

- a plain pod goes on the lowest-numbered node with room (a node with 8 GPUs
  takes eight 1-GPU pods);
- a gang group puts each of its pods on a distinct node, the lowest-numbered
  ones with room;
- an allocation is all or nothing: if any of its groups does not fit, none
  of it is counted. Such a replica is overcommitted by earlier admissions;
  its own deployment moves it, and until then later replicas may use the
  room (they were admitted after it, but it is leaving).

Device names a class no longer has are ignored: a class edit must not make
the arithmetic fail, and the replica's own deployment re-resolves it.

``PoolFill`` is mutable working state that never leaves the scheduler.
Its ``key()`` is the fill as a plain value: a fleet of a thousand clusters
holds a few dozen distinct pool fills, so replays and trial placements are
memoised by it (``replay_rows``, ``trial``) instead of redone per cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .types import DRA, InferenceClass, PodGroup


class PoolFill:
    """Free devices on each node of one pool.

    First fit always takes the lowest-numbered node that fits, and an
    untouched node fits whatever a later untouched node fits, so the nodes
    ever used form a prefix: only that prefix has rows (``free``); the
    ``nodes - len(free)`` nodes after it are whole. An empty pool of any
    size costs nothing, and a scan stops at the first untouched node.
    """

    __slots__ = ("_key", "dims", "free", "nodes", "per_node")

    def __init__(self, dims: tuple[str, ...], per_node: tuple[int, ...], nodes: int, free: list[list[int]] | None = None) -> None:
        self.dims = dims
        self.per_node = per_node
        self.nodes = max(nodes, 0)
        self.free = free if free is not None else []
        self._key: FillKey | None = None

    def key(self) -> FillKey:
        """(per node, nodes, rows): equal keys place identically whatever
        the device names, so results computed for one fill hold for all.
        Cached until the fill changes (``place``, ``row``, ``Taken.undo``)."""
        if self._key is None:
            self._key = (self.per_node, self.nodes, tuple(map(tuple, self.free)))
        return self._key

    @classmethod
    def empty(cls, klass: InferenceClass, nodes: int) -> PoolFill:
        dims, per_node = shape(klass)
        return cls(dims, per_node, nodes)

    def load(self, rows: tuple[tuple[int, ...], ...]) -> None:
        """Take the rows of a fill with the same key (a memoised replay)."""
        self.free = [list(r) for r in rows]
        self._key = (self.per_node, self.nodes, rows)

    def copy(self) -> PoolFill:
        return PoolFill(self.dims, self.per_node, self.nodes, [row[:] for row in self.free])

    def clone(self) -> PoolFill:
        """``copy`` that keeps the cached key (equal rows, equal key): a
        replayed template handed to many clusters."""
        out = PoolFill(self.dims, self.per_node, self.nodes, [row[:] for row in self.free])
        out._key = self.key()
        return out

    def vector(self, devices: Mapping[str, int]) -> tuple[int, ...]:
        return tuple(devices.get(name, 0) for name in self.dims)

    def free_devices(self) -> int:
        return sum(sum(row) for row in self.free) + (self.nodes - len(self.free)) * sum(self.per_node)

    def row(self, i: int) -> list[int]:
        """Node ``i``'s free devices (materialising untouched nodes up to it)."""
        self._key = None
        while len(self.free) <= i:
            self.free.append(list(self.per_node))
        return self.free[i]

    def room(self, pods: int, vec: tuple[int, ...], gang: bool) -> int:
        """How many of ``pods`` would fit, for an explanation."""
        if gang:
            whole = self.nodes - len(self.free) if _fits(self.per_node, vec) else 0
            return min(pods, sum(1 for row in self.free if _fits(row, vec)) + whole)
        trial = self.copy()
        placed = 0
        for _ in range(pods):
            if trial._first_fit(vec) is None:
                break
            placed += 1
        return placed

    def place(self, pods: int, vec: tuple[int, ...], gang: bool) -> list[int] | None:
        """Place ``pods`` pods of ``vec`` each; the nodes used, or None (and
        nothing changed) when they do not fit."""
        self._key = None
        if gang:
            chosen = [i for i, row in enumerate(self.free) if _fits(row, vec)][:pods]
            if len(chosen) < pods and _fits(self.per_node, vec):
                chosen += range(len(self.free), min(self.nodes, len(self.free) + pods - len(chosen)))
            if len(chosen) < pods:
                return None
            for i in chosen:
                _take(self.row(i), vec)
            return chosen
        used: list[int] = []
        for _ in range(pods):
            i = self._first_fit(vec)
            if i is None:
                for j in used:  # all or nothing
                    _give(self.free[j], vec)
                return None
            used.append(i)
        return used

    def _first_fit(self, vec: tuple[int, ...]) -> int | None:
        for i, row in enumerate(self.free):
            if _fits(row, vec):
                _take(row, vec)
                return i
        i = len(self.free)
        if i < self.nodes and _fits(self.per_node, vec):
            _take(self.row(i), vec)
            return i
        return None


def shape(klass: InferenceClass) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The consumable (DRA) devices of a class and their count per node."""
    dra = [d for d in klass.devices if d.claim == DRA]
    return tuple(d.name for d in dra), tuple(d.count for d in dra)


def _fits(row: list[int] | tuple[int, ...], vec: tuple[int, ...]) -> bool:
    for have, want in zip(row, vec):
        if have < want:
            return False
    return True


def _take(row: list[int], vec: tuple[int, ...]) -> None:
    for k, want in enumerate(vec):
        row[k] -= want


def _give(row: list[int], vec: tuple[int, ...]) -> None:
    for k, want in enumerate(vec):
        row[k] += want


class Taken:
    """What ``place_groups`` took: the nodes used, and a way to give it back."""

    __slots__ = ("log",)

    def __init__(self, log: list[tuple[str, PoolFill, list[int], tuple[int, ...]]]) -> None:
        self.log = log

    def nodes(self) -> set[tuple[str, int]]:
        return {(name, i) for name, _, ns, _ in self.log for i in ns}

    def spare(self) -> int:
        """Free devices left on the nodes used."""
        seen = set()
        total = 0
        for name, fill, ns, _ in self.log:
            for i in ns:
                if (name, i) not in seen:
                    seen.add((name, i))
                    total += sum(fill.free[i])
        return total

    def undo(self) -> None:
        for _, fill, ns, vec in reversed(self.log):
            fill._key = None
            for i in ns:
                _give(fill.free[i], vec)
        self.log = []


# A pool's groups as (count, device vector, gang), hashable so they can key a memo.
Groups = tuple[tuple[int, tuple[int, ...], bool], ...]
Compiled = tuple[tuple[str, Groups], ...]
FillKey = tuple[tuple[int, ...], int, tuple[tuple[int, ...], ...]]


def compile_groups(fills: Mapping[str, PoolFill], pools: Iterable[tuple[str, Iterable[PodGroup]]]) -> Compiled | None:
    """Groups as ((pool, ((count, device vector, gang), ...)), ...) for
    ``place_compiled``; None when a pool is unknown. Worth keeping when
    placed many times."""
    out = []
    for name, groups in pools:
        fill = fills.get(name)
        if fill is None:
            return None
        out.append((name, tuple((g.count, fill.vector(g.devices), g.gang) for g in groups)))
    return tuple(out)


def place_compiled(fills: Mapping[str, PoolFill], compiled: Compiled) -> Taken | None:
    taken = Taken([])
    for name, groups in compiled:
        fill = fills[name]
        for count, vec, gang in groups:
            nodes = fill.place(count, vec, gang)
            if nodes is None:
                taken.undo()
                return None
            taken.log.append((name, fill, nodes, vec))
    return taken


def place_groups(fills: Mapping[str, PoolFill], pools: Iterable[tuple[str, Iterable[PodGroup]]]) -> Taken | None:
    """Place every group of an allocation (possibly spanning pools) all or
    nothing: on failure what was taken is given back and None returned (also
    for an unknown pool)."""
    compiled = compile_groups(fills, pools)
    return None if compiled is None else place_compiled(fills, compiled)


def trial(fill: PoolFill, groups: Groups) -> tuple[int, int] | None:
    """Place ``groups`` (all or nothing) on a copy of ``fill``: (free devices
    left on the nodes used, free devices left in the pool), or None when they
    do not fit. ``fill`` is unchanged; the answer depends only on
    ``fill.key()`` and ``groups``, so callers memoise it."""
    probe = fill.copy()
    used: set[int] = set()
    for count, vec, gang in groups:
        nodes = probe.place(count, vec, gang)
        if nodes is None:
            return None
        used.update(nodes)
    return sum(sum(probe.free[i]) for i in used), probe.free_devices()


def replay_rows(fill: PoolFill, allocations: Iterable[Groups]) -> tuple[tuple[int, ...], ...]:
    """The rows of an empty ``fill`` after placing each allocation's groups in
    turn, all or nothing (an allocation that does not fit is not counted).
    Depends only on ``fill.key()`` and the groups, so callers memoise it."""
    probe = {"": PoolFill(fill.dims, fill.per_node, fill.nodes)}
    for groups in allocations:
        place_compiled(probe, (("", groups),))
    return probe[""].key()[2]
