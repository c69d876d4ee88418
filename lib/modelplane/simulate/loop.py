"""Reconcile a whole fleet until nothing changes, as a watch-driven control plane would.

A round walks ``KIND_ORDER``; for each kind it renders the XRs that are
*dirty* (``tracking``) and applies the results (``reconcile``); the workload
clusters whose composed resources changed then settle (``sync``). The
``Simulator`` composes the three and owns the rounds:

- ``tracking.Changes``: which XRs must render again (what they read changed,
  or their TTL passed), and the read side their required resources come from;
- ``reconcile.Reconciler``: one XR's render inputs, its render, its result
  applied as the API server and the controllers would;
- ``sync.ClusterSync``: each workload cluster's physical model and the statuses
  its controllers write back.

The fixed point is a round that leaves nothing dirty. XRs of one kind never
read each other, so a kind's dirty XRs render concurrently (the functions are
separate processes, ``Pools``) against the world as it was when the wave
began, and their results are applied in name order: the outcome does not
depend on which render finishes first. ModelDeployments place replicas from
what the clusters report, so they render in bounded waves (``BATCH``) with the
InferenceClusters rendering between waves that placed something: a wave sees
the placements of the waves before it instead of herding onto the same pools.
``incremental=False`` renders every XR every round and stops at the first
round that changes nothing: the reference the incremental mode is tested
against (``tests/simulate/test_fleet.py::
test_incremental_reconcile_reaches_the_same_world_as_rendering_everything_every_round``).
A ``progress.Progress`` sink hears each round begin and each XR reconciled; the
default says nothing.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from modelplane import functions, paths
from modelplane.physical.interface import PhysicalFleet
from modelplane.render import FunctionPool, reader
from modelplane.simulate.codec import CachingCodec
from modelplane.simulate.heap import collector_paused
from modelplane.simulate.progress import NO_PROGRESS, Progress
from modelplane.simulate.reconcile import Job, Reconciler
from modelplane.simulate.sync import ClusterSync
from modelplane.simulate.tracking import Changes
from modelplane.simulate.world import CLUSTER_KIND, KIND_ORDER, Key, World, label
from modelplane.validate.admission import load_dir

BATCH = {"ModelDeployment": 10}
SPREAD = {"ModelDeployment": 2, "ModelReplica": 2, "InferenceCluster": 2}


@dataclass
class Outcome:
    rounds: int
    converged: bool
    still_changing: list[str] = field(default_factory=list)
    renders: int = 0


def load_compositions(apis: Path = paths.APIS) -> dict[str, dict]:
    """Composite kind -> its Composition, from apis/*/composition.yaml."""
    out = {}
    for path in sorted(Path(apis).glob("*/composition.yaml")):
        comp = reader.load_one(path.read_text(encoding="utf-8"))
        out[((comp.get("spec") or {}).get("compositeTypeRef") or {}).get("kind", "")] = comp
    return out


def load_functions(path: Path | None = None) -> list[dict]:
    """The Function objects the Compositions name: from ``path``, else one per registered function.

    The default is built from the registry rather than read from examples/functions.yaml, which an
    installed wheel does not have; each is served locally by name (``modelplane.render.runners``)."""
    if path is None:
        return [{"apiVersion": "pkg.crossplane.io/v1", "kind": "Function", "metadata": {"name": f"modelplane-{name}"}}
                for name in functions.available()]
    return [d for d in reader.load_all(Path(path).read_text(encoding="utf-8")) if isinstance(d, dict)]


class Pools:
    """The function processes a wave spreads its renders over: the caller's pool, and more of our own."""

    def __init__(self, pool: FunctionPool, spread: dict[str, int]):
        self.pool = pool
        # kind -> function processes its waves spread over: the kinds with the most or the dearest
        # renders get two, so both cores work while the simulator waits (a function is one process).
        self.spread = spread
        self._extra: list[FunctionPool] = []
        # Their processes must not outlive the simulator, whoever forgets to close it.
        weakref.finalize(self, _close_all, self._extra)

    def of(self, kind: str) -> list[FunctionPool]:
        """The pools a wave of ``kind`` spreads its renders over (one function process each)."""
        want = max(1, self.spread.get(kind, 1))
        while len(self._extra) < want - 1:
            self._extra.append(FunctionPool())
        return [self.pool, *self._extra[: want - 1]]

    def close(self) -> None:
        """Stop the extra function processes a spread wave started (the caller's pool is the caller's)."""
        _close_all(self._extra)


def _nothing() -> None:
    return None


def _close_all(pools: list[FunctionPool]) -> None:
    for pool in pools:
        pool.close()
    pools.clear()


class Simulator:
    """Drives a ``World`` to its fixed point through the real functions."""

    def __init__(self, world: World, pool: FunctionPool, *, compositions: dict[str, dict] | None = None,
                 functions: list[dict] | None = None, unready: set[str] | None = None, timeout: float = 60.0,
                 incremental: bool = True, workers: int = 4,
                 on_round: Callable[[Simulator, int], None] | None = None,
                 hardware: dict[str, dict] | None = None, physical: PhysicalFleet | None = None,
                 batch: dict[str, int] | None = None, spread: dict[str, int] | None = None,
                 progress: Progress = NO_PROGRESS):
        self.world = world
        self.progress = progress
        self.incremental = incremental
        self.workers = max(1, workers)
        self.on_round = on_round
        # kind -> at most this many of its dirty XRs render per round, the longest waiting first
        # (incremental mode). A ModelDeployment places replicas from what
        # the clusters report; ones rendered in the same wave cannot see each other's placements, so
        # a wave of hundreds herds onto the same pools and is evicted in admission order, round after
        # round. Bounded waves let clusters publish each batch's placements before the next batch
        # decides, as a control plane with a few reconcile workers per kind does.
        self.batch = dict(BATCH if batch is None else batch)
        self._limits = dict(self.batch)                       # kind -> its next wave's size
        self.pools = Pools(pool, dict(SPREAD if spread is None else spread))
        self.changes = Changes(world)
        codec = CachingCodec()
        self.clusters = ClusterSync(world, self.changes, codec, physical=physical, hardware=hardware,
                                    unready=unready)
        self.reconciler = Reconciler(
            world, self.changes, self.clusters, codec,
            compositions=compositions if compositions is not None else load_compositions(),
            functions=functions if functions is not None else load_functions(), timeout=timeout)
        self.renders = 0
        self.rounds = 0
        self._between_waves: Callable[[], None] = _nothing   # ``heap``: while ``run`` runs
        world.listeners.append(self._on_change)

    def _on_change(self, key: Key, before: dict | None, after: dict | None, parent: Key | None) -> None:
        """The world's listener: an XR was created, changed or deleted."""
        self.reconciler.forget(key, before, after)
        self.changes.heard(key, before, after, parent)
        self.clusters.heard(key, after)

    # ----- what callers read and drive ----------------------------------------------------
    @property
    def physical(self) -> PhysicalFleet:
        """The workload clusters as they run (``report.capacity`` reads them)."""
        return self.clusters.physical

    def inputs(self, key: Key) -> Job:
        """What a render of ``key`` would be given now (or why it cannot render)."""
        return self.reconciler.inputs(key)

    def observed(self, key: Key) -> list[dict]:
        """The composed resources of ``key`` as Crossplane would observe them."""
        return self.reconciler.observed(key)

    def set_cluster_ready(self, name: str, ready: bool) -> None:
        """Take a workload cluster down (its API stops answering) or bring it back."""
        self.clusters.set_ready(name, ready)

    def add_other(self, obj: dict) -> None:
        """Create or replace an object that is not an XR (a Secret): functions may require it, and
        Objects on every cluster may reference it (``physical.provider``: a copy's data follows)."""
        self.changes.add_other(obj)
        self.clusters.stale.update(self.clusters.names())

    def next_due(self) -> int | None:
        """The clock second at which the next XR asked to be reconciled again (its response TTL)."""
        return self.changes.next_due()

    def advance(self, seconds: int) -> None:
        """Move the simulated clock; XRs whose TTL passed are dirty again."""
        self.world.clock += seconds
        self.changes.expire()
        self.clusters.stale.update(self.clusters.names())

    def close(self) -> None:
        """Stop the extra function processes a spread wave started."""
        self.pools.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- the loop -------------------------------------------------------------------------
    def _wave(self, kind: str, executor: ThreadPoolExecutor | None,
              skip: frozenset[Key] = frozenset()) -> tuple[list[Key], bool]:
        """Render ``kind``'s dirty XRs (all of them when not incremental), except ``skip``.

        The keys rendered, and whether the wave created or deleted ModelReplicas."""
        limit = self._limits.get(kind) if self.incremental else None
        if self.incremental:
            keys = self.changes.take(kind, limit, skip)
        else:
            keys = [k for k in self.world.ordered() if k[0] == kind]
            self.changes.clean(keys)
        reconciler = self.reconciler
        jobs: list[Job] = [reconciler.inputs(k) for k in keys]
        pools = self.pools.of(kind)
        spread = [pools[i % len(pools)] for i in range(len(jobs))]
        if executor is not None and len(jobs) > 1:
            # In name order, each as soon as it is back: applying overlaps the renders still running,
            # which were all prepared from the world as the wave began.
            results = executor.map(reconciler.render, jobs, spread)
        else:
            results = (reconciler.render(j, p) for j, p in zip(jobs, spread))
        self.renders += sum(1 for j in jobs if not isinstance(j, str))
        placed = self.changes.placed
        xrs = self.world.xrs
        for key, job, result in zip(keys, jobs, results):
            reconciler.apply(key, job[1] if not isinstance(job, str) else [], result)
            self.progress.reconciled(1, len(xrs))
        moved = self.changes.placed != placed
        if limit:
            # A wave that placed or removed no replica cannot have herded: the next may be twice as
            # large; one that did goes back to the batch size.
            self._limits[kind] = limit * 2 if not moved else self.batch[kind]
        self.clusters.settle()
        self._between_waves()
        return keys, moved

    def _batched(self, kind: str, executor: ThreadPoolExecutor | None) -> None:
        """A batched kind's dirty XRs in bounded waves, each seeing what the last one placed.

        A wave's placements reach the next wave through the clusters' status (the InferenceClusters
        publish the allocations of the ModelReplicas on them), so after a wave that placed or removed
        replicas the dirty InferenceClusters render and the next wave follows in the same round: as a
        control plane whose clusters reconcile faster than new deployments arrive. The rest of the
        fleet (ModelReplicas, endpoints) then renders once for all those waves, not once per wave.
        A wave that moved nothing ends the round's waves (the others wait, with a larger limit);
        each XR renders at most once per round, so a round ends."""
        rendered, moved = self._wave(kind, executor)
        done = frozenset(rendered)
        while moved and self.changes.waiting(kind, done):
            self._wave(CLUSTER_KIND, executor)
            rendered, moved = self._wave(kind, executor, skip=done)
            if not rendered:
                break
            done |= frozenset(rendered)

    def round(self, executor: ThreadPoolExecutor | None = None) -> None:
        self.progress.round_started(self.rounds + 1, len(self.world.xrs))
        for kind in KIND_ORDER:
            if self.incremental and kind in self.batch:
                self._batched(kind, executor)
            else:
                self._wave(kind, executor)
        self.clusters.settle()
        self.rounds += 1
        if self.on_round is not None:
            self.on_round(self, self.rounds)

    def start_functions(self) -> None:
        """Start every function the Compositions name at once, so their start-ups overlap."""
        self.reconciler.start(self.pools.pool)

    def run(self, max_rounds: int = 30) -> Outcome:
        """Reconcile until the fixed point, or give up after ``max_rounds`` more rounds."""
        if not self.rounds:
            # Seconds on a busy machine, with nothing else to show: say what the wait is.
            self.progress.phase("starting functions")
        self.start_functions()
        self.clusters.settle()
        executor = ThreadPoolExecutor(self.workers) if self.workers > 1 else None
        start = self.rounds
        dirty = self.changes.dirty
        with collector_paused() as self._between_waves:
            try:
                return self._rounds(max_rounds, executor, start, dirty)
            finally:
                self._between_waves = _nothing
                if executor is not None:
                    executor.shutdown()

    def _rounds(self, max_rounds: int, executor: ThreadPoolExecutor | None, start: int,
                dirty: dict[Key, None]) -> Outcome:
        """The rounds of ``run``, with its executor."""
        before = self.world.snapshot() if not self.incremental else None
        for n in range(1, max_rounds + 1):
            self.round(executor)
            if self.incremental:
                if not dirty:
                    return Outcome(rounds=n, converged=True, renders=self.renders)
                continue
            after = self.world.snapshot()
            if after == before:
                dirty.clear()
                return Outcome(rounds=n, converged=True, renders=self.renders)
            before = after
        changing = sorted(label(k) for k in dirty) if self.incremental else sorted(
            k for k in set(before or {}) | set(after) if (before or {}).get(k) != after.get(k))
        return Outcome(rounds=self.rounds - start, converged=False, still_changing=changing, renders=self.renders)


def simulate_dir(directory: Path, *, unready: set[str] | None = None, max_rounds: int = 100,
                 pool: FunctionPool | None = None, incremental: bool = True) -> tuple[World, Outcome]:
    """Load every manifest under ``directory`` and reconcile to the fixed point."""
    world, outcome, _ = simulate(directory, unready=unready, max_rounds=max_rounds, pool=pool,
                                 incremental=incremental)
    return world, outcome


def load(directory: Path, pool: FunctionPool, **options: Any) -> Simulator:
    """A Simulator of every manifest under ``directory``, nothing reconciled yet."""
    xrs, others = load_dir(directory)
    world = World(others=others)
    # A physical fleet may have to adapt what it is given (the lab's clusters serve their gateways
    # with the lab's own data plane: modelplane.lab.backend.LabPhysical.adopt).
    adopt = getattr(options.get("physical"), "adopt", None)
    for obj in xrs:
        world.apply(adopt(obj) if adopt else obj)
    return Simulator(world, pool, **options)


def simulate(directory: Path, *, unready: set[str] | None = None, max_rounds: int = 100,
             pool: FunctionPool | None = None, incremental: bool = True,
             **options: Any) -> tuple[World, Outcome, Simulator]:
    """``simulate_dir``, also returning the Simulator (its physical clusters, clock, ...)."""
    own = pool is None
    pool = pool or FunctionPool()
    try:
        sim = load(directory, pool, unready=unready, incremental=incremental, **options)
        world = sim.world
        try:
            outcome = sim.run(max_rounds=max_rounds)
        finally:
            sim.close()
    finally:
        if own:
            pool.close()
    return world, outcome, sim


__all__ = ["Outcome", "Simulator", "load", "simulate", "simulate_dir"]
