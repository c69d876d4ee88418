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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .types import DRA, InferenceClass, PodGroup, PoolPlacement


class PoolFill:
    """Free devices on each node of one pool."""

    __slots__ = ("dims", "free", "per_node")

    def __init__(self, dims: tuple[str, ...], per_node: tuple[int, ...], free: list[list[int]]) -> None:
        self.dims = dims
        self.per_node = per_node
        self.free = free

    @classmethod
    def empty(cls, klass: InferenceClass, nodes: int) -> PoolFill:
        dra = [d for d in klass.devices if d.claim == DRA]
        dims = tuple(d.name for d in dra)
        per_node = tuple(d.count for d in dra)
        return cls(dims, per_node, [list(per_node) for _ in range(max(nodes, 0))])

    def copy(self) -> PoolFill:
        return PoolFill(self.dims, self.per_node, [row[:] for row in self.free])

    @property
    def nodes(self) -> int:
        return len(self.free)

    def vector(self, devices: Mapping[str, int] | Iterable[tuple[str, int]]) -> tuple[int, ...]:
        want = dict(devices.items() if isinstance(devices, Mapping) else devices)
        return tuple(want.get(name, 0) for name in self.dims)

    def free_devices(self) -> int:
        return sum(sum(row) for row in self.free)

    def spare(self, nodes: Iterable[int]) -> int:
        return sum(sum(self.free[i]) for i in nodes)

    def room(self, pods: int, vec: tuple[int, ...], gang: bool) -> int:
        """How many of ``pods`` would fit, for an explanation."""
        if gang:
            return min(pods, sum(1 for row in self.free if _fits(row, vec)))
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
        if gang:
            chosen = [i for i, row in enumerate(self.free) if _fits(row, vec)][:pods]
            if len(chosen) < pods:
                return None
            for i in chosen:
                _take(self.free[i], vec)
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
        return None


def _fits(row: list[int], vec: tuple[int, ...]) -> bool:
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


def place_groups(fills: Mapping[str, PoolFill], pools: Iterable[tuple[str, Iterable[PodGroup]]]) -> set[tuple[str, int]] | None:
    """Place every group of an allocation (possibly spanning pools) all or
    nothing; mutates ``fills`` only on success. Returns the (pool, node)
    pairs used, or None when something does not fit (or a pool is unknown)."""
    plan = [(name, list(groups)) for name, groups in pools]
    if any(name not in fills for name, _ in plan):
        return None
    trial = {name: fills[name].copy() for name, _ in plan}
    used: set[tuple[str, int]] = set()
    for name, groups in plan:
        fill = trial[name]
        for group in groups:
            nodes = fill.place(group.count, fill.vector(group.devices), group.gang)
            if nodes is None:
                return None
            used.update((name, i) for i in nodes)
    for name, fill in trial.items():
        fills[name].free = fill.free  # type: ignore[index]
    return used


def placement_groups(placements: Iterable[PoolPlacement]) -> list[tuple[str, tuple[PodGroup, ...]]]:
    return [(p.pool, p.pods) for p in placements]
