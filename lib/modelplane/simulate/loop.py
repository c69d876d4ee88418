"""Reconcile a whole fleet until nothing changes.

One round renders every XR, in ``KIND_ORDER``, through its Composition and
the real functions over gRPC (``modelplane.render`` with engine-mode
namespace lookups). After each render the world is updated as the control
plane would update it:

- the XR's status becomes what its functions wrote (conditions included);
- composed XRs (ModelReplica, ModelEndpoint) are applied as XRs in their own
  right and reconciled in their turn; ones no longer desired are deleted
  with everything they composed;
- other composed resources get the status a healthy cluster would report
  (``health``), unless named with ``--unready``.

The loop stops at the first round that changes nothing (the fixed point) or
at ``max_rounds``, reporting which XRs kept changing. A FATAL result leaves
the XR's children as they were and is shown in its conditions, as Crossplane
would show a ReconcileError.
"""
from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from modelplane import functions, paths
from modelplane.render import FunctionPool, RenderError, RenderInputs, reader, render
from modelplane.simulate import health
from modelplane.simulate.world import Key, World, is_xr, key_of

RESOURCE_NAME = "crossplane.io/composition-resource-name"


@dataclass
class Outcome:
    rounds: int
    converged: bool
    still_changing: list[str] = field(default_factory=list)


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


class Simulator:
    """Drives a ``World`` to its fixed point through the real functions."""

    def __init__(self, world: World, pool: FunctionPool, *, compositions: dict[str, dict] | None = None,
                 functions: list[dict] | None = None, unready: set[str] | None = None, timeout: float = 60.0):
        self.world = world
        self.pool = pool
        self.compositions = compositions if compositions is not None else load_compositions()
        self.functions = functions if functions is not None else load_functions()
        self.unready = set(unready or ())
        self.timeout = timeout
        self.book = health.AddressBook()

    # ----- one XR ------------------------------------------------------------
    def _observed(self, key: Key) -> list[dict]:
        """Composed resources as Crossplane would observe them."""
        out = []
        for name, obj in sorted(self.world.xrs[key].composed.items()):
            child_key = key_of(obj)
            if is_xr(obj) and child_key in self.world.xrs:
                live = copy.deepcopy(self.world.xrs[child_key].obj)
                live.setdefault("metadata", {}).setdefault("annotations", {})[RESOURCE_NAME] = name
                out.append(live)
            else:
                out.append(copy.deepcopy(obj))
        return out

    def _ready(self, name: str, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        return name not in self.unready and meta.get("name") not in self.unready

    def _where(self, obj: dict) -> str:
        ref = ((obj.get("spec") or {}).get("providerConfigRef") or {}).get("name")
        return ref or "control-plane"

    def reconcile(self, key: Key) -> None:
        state = self.world.xrs.get(key)
        if state is None:
            return
        comp = self.compositions.get(key[0])
        if comp is None:
            state.fatal = f"no Composition for kind {key[0]}"
            return
        inputs = RenderInputs(
            xr=copy.deepcopy(state.obj),
            composition=comp,
            functions=self.functions,
            observed=self._observed(key),
            required_resources=self.world.candidates(),
            timeout=self.timeout,
            strict_namespace=True,
        )
        try:
            out = render(inputs, self.pool)
        except RenderError as err:
            state.fatal = str(err)
            return
        state.fatal = None
        status = (out.xr.get("status") or {})
        state.obj["status"] = status
        self._apply_composed(key, out.composed)

    def _apply_composed(self, key: Key, composed: list[dict]) -> None:
        state = self.world.xrs[key]
        uid = (state.obj.get("metadata") or {}).get("uid", "")
        new: dict[str, dict] = {}
        for obj in composed:
            meta = obj.setdefault("metadata", {})
            name = (meta.get("annotations") or {}).get(RESOURCE_NAME, "")
            if not meta.get("name"):
                # The API server names generateName objects; do it stably.
                suffix = hashlib.sha256(f"{uid}/{name}".encode()).hexdigest()[:5]
                meta["name"] = meta.pop("generateName", "x-") + suffix
            if is_xr(obj):
                child = copy.deepcopy(obj)
                child.pop("status", None)
                self.world.apply(child, parent=key)
                new[name] = obj
                continue
            obj["status"] = health.composed_status(obj, self._where(obj), self.book, self._ready(name, obj))
            new[name] = obj
        for name, old in state.composed.items():
            if name not in new and is_xr(old):
                self.world.delete(key_of(old))
        state.composed = new

    # ----- the loop -----------------------------------------------------------
    def run(self, max_rounds: int = 30) -> Outcome:
        before = self.world.snapshot()
        for n in range(1, max_rounds + 1):
            for key in self.world.ordered():
                self.reconcile(key)
            after = self.world.snapshot()
            if after == before:
                return Outcome(rounds=n, converged=True)
            changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
            before = after
        return Outcome(rounds=max_rounds, converged=False, still_changing=changed)


def simulate_dir(directory: Path, *, unready: set[str] | None = None, max_rounds: int = 30,
                 pool: FunctionPool | None = None) -> tuple[World, Outcome]:
    """Load every manifest under ``directory`` and reconcile to the fixed point."""
    from modelplane.simulate.world import load_dir

    xrs, others = load_dir(directory)
    world = World(others=others)
    for obj in xrs:
        world.apply(obj)
    own = pool is None
    pool = pool or FunctionPool()
    try:
        outcome = Simulator(world, pool, unready=unready).run(max_rounds=max_rounds)
    finally:
        if own:
            pool.close()
    return world, outcome


__all__ = ["Outcome", "Simulator", "simulate_dir"]
