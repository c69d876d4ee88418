"""Scenarios: a simulated fleet taken through changes over simulated time.

A scenario file is YAML with ``steps:``, each a mapping with exactly one of:

- ``apply: <file or folder>`` (relative to the scenario file): create or
  update every manifest in it, then reconcile to the fixed point;
- ``delete: {kind, name, namespace}``: delete that XR (and what it composed),
  then reconcile;
- ``cluster: {name, ready: true|false}``: the workload cluster stops
  answering (its remote objects and Helm releases report ``Synced=False``,
  ``Ready=False``, so its InferenceCluster turns NotReady through its own
  function) or answers again; then reconcile;
- ``advance: <duration>`` (``90s``, ``5m``, ``1h30m``): the simulated clock
  moves on. XRs whose functions asked to be called again (the response TTL)
  are reconciled at the instant it runs out, in order, so time-based
  decisions (failover after 5m) happen when they are due;
- ``settle: {}``: reconcile to the fixed point now.

Every reconcile round is reported to ``on_round`` with the step it belongs to;
``timeline`` turns the world into the line the CLI prints.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelplane import paths
from modelplane.errors import InputError
from modelplane.render import reader
from modelplane.validate.admission import XR_KINDS, admitted, is_xr

VERBS = ("apply", "delete", "cluster", "advance", "settle")
_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


@dataclass(frozen=True)
class Step:
    index: int
    verb: str
    arg: Any

    def describe(self) -> str:
        if self.verb == "apply":
            return f"apply {self.arg}"
        if self.verb == "delete":
            return f"delete {self.arg[0]}/{self.arg[1] + '/' if self.arg[1] else ''}{self.arg[2]}"
        if self.verb == "cluster":
            return f"cluster {self.arg[0]} {'ready' if self.arg[1] else 'not ready'}"
        if self.verb == "advance":
            return f"advance {seconds_text(self.arg)}"
        return "settle"


def duration(text: Any, field: str) -> int:
    """Seconds of a duration like ``90s``, ``5m``, ``1h30m``."""
    m = _DURATION.fullmatch(str(text)) if isinstance(text, str) else None
    if not m or not any(m.groups()):
        raise InputError(field, f"{text!r} is not a duration; write it like 90s, 5m or 1h30m")
    h, mi, s = (int(g or 0) for g in m.groups())
    return h * 3600 + mi * 60 + s


def seconds_text(seconds: int) -> str:
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return "".join(f"{v}{u}" for v, u in ((h, "h"), (m, "m"), (s, "s")) if v) or "0s"


def parse(path: Path) -> list[Step]:
    """The steps of scenario file ``path``; InputError names the field and the fix."""
    try:
        doc = reader.load_one(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError("--scenario", f"cannot read {path}: {err.strerror}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list) or not doc["steps"]:
        raise InputError("steps", f"{path}: a scenario is a mapping with a non-empty list 'steps'")
    out = []
    base = Path(path).parent
    for i, raw in enumerate(doc["steps"]):
        field = f"steps[{i}]"
        verbs = [k for k in raw if k in VERBS] if isinstance(raw, dict) else []
        if not isinstance(raw, dict) or len(raw) != 1 or len(verbs) != 1:
            raise InputError(field, f"each step has exactly one of {', '.join(VERBS)}")
        verb = verbs[0]
        value = raw[verb]
        at = f"{field}.{verb}"
        if verb == "apply":
            if not isinstance(value, str) or not value:
                raise InputError(at, "name a file or folder of manifests, relative to the scenario file")
            target = base / value
            if not target.exists():
                raise InputError(at, f"{target} does not exist")
            out.append(Step(i, verb, value))
        elif verb == "delete":
            if not isinstance(value, dict) or not value.get("kind") or not value.get("name"):
                raise InputError(at, "give {kind, name} and, for a namespaced kind, namespace")
            if value["kind"] not in XR_KINDS:
                raise InputError(f"{at}.kind", f"{value['kind']!r} is not a Modelplane kind; one of {', '.join(sorted(XR_KINDS))}")
            out.append(Step(i, verb, (value["kind"], str(value.get("namespace") or ""), str(value["name"]))))
        elif verb == "cluster":
            if not isinstance(value, dict) or not value.get("name") or not isinstance(value.get("ready"), bool):
                raise InputError(at, "give {name: <InferenceCluster>, ready: true|false}")
            out.append(Step(i, verb, (str(value["name"]), value["ready"])))
        elif verb == "advance":
            out.append(Step(i, verb, duration(value, at)))
        else:
            if value not in ({}, None):
                raise InputError(at, "settle takes no arguments: write settle: {}")
            out.append(Step(i, verb, None))
    return out


def manifests(target: Path) -> list[dict]:
    return [d for f in paths.yaml_files(target) for d in reader.load_all_fast(f.read_text(encoding="utf-8"))
            if isinstance(d, dict) and d.get("kind")]


class Runner:
    """Plays steps on a Simulator, reconciling after each."""

    def __init__(self, sim: Any, base: Path, max_rounds: int = 100,
                 on_step: Callable[[Step], None] | None = None) -> None:
        self.sim = sim
        self.base = base
        self.max_rounds = max_rounds
        self.on_step = on_step
        self.unsettled: list[str] = []   # steps after which no fixed point was reached

    def settle(self, step: Step) -> None:
        outcome = self.sim.run(max_rounds=self.max_rounds)
        if not outcome.converged:
            self.unsettled.append(f"step {step.index} ({step.describe()}): still changing: "
                                  + ", ".join(outcome.still_changing[:5]))

    def play(self, steps: list[Step]) -> None:
        for step in steps:
            if self.on_step:
                self.on_step(step)
            getattr(self, f"_{step.verb}")(step)

    def _apply(self, step: Step) -> None:
        for doc in manifests(self.base / step.arg):
            if is_xr(doc):
                self.sim.world.apply(admitted(doc))
            else:
                self.sim.add_other(doc)
        self.settle(step)

    def _delete(self, step: Step) -> None:
        if step.arg not in self.sim.world.xrs:
            kind, ns, name = step.arg
            raise InputError(f"steps[{step.index}].delete", f"no {kind} {ns + '/' if ns else ''}{name} to delete")
        self.sim.world.delete(step.arg)
        self.settle(step)

    def _cluster(self, step: Step) -> None:
        name, ready = step.arg
        if ("InferenceCluster", "", name) not in self.sim.world.xrs:
            raise InputError(f"steps[{step.index}].cluster.name", f"no InferenceCluster {name}")
        self.sim.set_cluster_ready(name, ready)
        self.settle(step)

    def _advance(self, step: Step) -> None:
        end = self.sim.world.clock + step.arg
        while True:
            due = self.sim.next_due()
            if due is None or due > end:
                break
            self.sim.advance(max(due - self.sim.world.clock, 0))
            self.settle(step)
        self.sim.advance(end - self.sim.world.clock)
        self.settle(step)

    def _settle(self, step: Step) -> None:
        self.settle(step)


# ----- the timeline --------------------------------------------------------------
def deployments(world: Any) -> dict[str, dict[str, int]]:
    out = {}
    for key in world.ordered():
        if key[0] != "ModelDeployment":
            continue
        obj = world.xrs[key].obj
        replicas = (obj.get("status") or {}).get("replicas") or {}
        desired = replicas.get("desired", (obj.get("spec") or {}).get("replicas", 1))
        out[f"{key[1]}/{key[2]}"] = {"ready": int(replicas.get("ready") or 0), "desired": int(desired or 0),
                                     "updated": int(replicas.get("updated") or 0)}
    return out


def routed_ready(world: Any, down: set[str]) -> dict[str, int]:
    """Per ModelService: endpoints its route sends traffic to (weight > 0) that can really answer.

    A composed endpoint answers when its ModelReplica is Ready and its cluster is not down (a down
    cluster's replicas still look Ready from what was last observed); one written by hand (an
    external provider) when the endpoint is Ready.
    """
    out = {}
    for key in world.ordered():
        if key[0] != "ModelService":
            continue
        n = 0
        for entry in (world.xrs[key].obj.get("status") or {}).get("endpoints") or []:
            if not entry.get("weight"):
                continue
            endpoint = world.xrs.get(("ModelEndpoint", key[1], entry.get("name", "")))
            if endpoint is None:
                continue
            replica = world.xrs.get(("ModelReplica", key[1], entry.get("name", "")))
            if replica is None:
                n += _ready(endpoint.obj)
                continue
            cluster = ((replica.obj.get("spec") or {}).get("cluster") or {}).get("name", "")
            n += _ready(replica.obj) and cluster not in down
        out[f"{key[1]}/{key[2]}"] = n
    return out


def _ready(obj: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def timeline(sim: Any, step: Step | None) -> dict:
    return {"clock": sim.world.now(), "round": sim.rounds, "step": step.index if step else None,
            "action": step.describe() if step else "load",
            "deployments": deployments(sim.world), "services": routed_ready(sim.world, sim.clusters.down)}


def timeline_text(entry: dict) -> str:
    deps = " ".join(f"{n}={d['ready']}/{d['desired']}/{d['updated']}" for n, d in entry["deployments"].items())
    svcs = " ".join(f"{n}={c}" for n, c in entry["services"].items())
    return f"{entry['clock']}  round {entry['round']:<3}  {entry['action']:<36}  {deps or '-'}  |  {svcs or '-'}"


__all__ = ["Runner", "Step", "duration", "parse", "timeline", "timeline_text"]
