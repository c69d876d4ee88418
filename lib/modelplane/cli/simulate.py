"""``modelplane simulate DIR``: reconcile a directory of manifests and print the result.

A manifest, scenario or hardware file that cannot be read is one line naming
the file (and the line where it can) with exit 1; usage errors exit 2;
anything unexpected is one ``internal error`` line (a bug to report), never a
traceback.

On a terminal, stderr shows the run's progress on one line (``simulate.progress``), blanked
before anything else is printed; piped, or with ``--quiet``, stderr carries only messages.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

import yaml

from modelplane.errors import InputError
from modelplane.physical import driver_values
from modelplane.render import FunctionPool, RenderError, reader
from modelplane.simulate import report, scenario
from modelplane.simulate.loop import load
from modelplane.simulate.progress import for_stream
from modelplane.validate.admission import load_dir

VIEWS = ("placements", "conditions", "capacity", "routes", "timeline", "resources", "all")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="modelplane simulate",
        description="Reconcile every manifest under DIR through the real functions until nothing changes.",
    )
    p.add_argument("directory", metavar="DIR", type=Path, help="manifests: classes, clusters, gateway, models")
    p.add_argument("--show", choices=VIEWS, default="placements",
                   help="what to print (default: placements; 'capacity': devices used per pool and every "
                        "Pending pod with its reason; 'timeline': after every reconcile round, the clock, each "
                        "ModelDeployment's ready/desired/updated replicas and each ModelService's routed ready "
                        "endpoints; 'routes': per ModelService and replica, the URL, the weights and the "
                        "backends its routes resolve to, and with --lab one live answer; 'resources' prints a "
                        "YAML stream)")
    p.add_argument("--scenario", type=Path, metavar="FILE",
                   help="after DIR settles, play the steps of FILE (apply, delete, cluster, advance, settle)")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text",
                   help="with --show timeline: 'json' prints one JSON object per round")
    p.add_argument("--unready", action="append", default=[], metavar="NAME",
                   help="leave the composed resource NAME (resource or metadata name) unready; repeatable")
    # A string, not a Path: Path("./published") is "published", and a file of that name must stay reachable.
    p.add_argument("--hardware", metavar="FILE",
                   help="InferenceClasses describing the devices nodes really carry: pools naming one of these "
                        "classes get its devices in the physical model, while the fleet scheduler still reads the "
                        "class under DIR (what if a class is wrong?); the word 'published' gives every GPU of a "
                        "product in Modelplane's value table what its DRA driver publishes (a file of that name: "
                        "./published)")
    p.add_argument("--max-rounds", type=int, default=100, metavar="N",
                   help="give up when a settle takes more than N rounds (default 100)")
    p.add_argument("--lab", nargs="?", const="", default=None, metavar="STATE",
                   help="apply every composed remote object to the running lab (modelplane lab up) and read its "
                        "status back from the real servers; STATE is the lab's folder (default: lab's default)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress line on stderr (it is shown only when stderr is a terminal)")
    return p


PUBLISHED = "published"


def published_hardware(directory: Path) -> dict[str, dict]:
    """``--hardware published``: each InferenceClass under ``directory`` as the nodes' drivers publish it
    (``modelplane.physical.driver_values``): a class stating marketing sizes gets the real ones."""
    xrs, _ = load_dir(directory)
    return {(x.get("metadata") or {}).get("name", ""): driver_values.published(x.get("spec") or {})
            for x in xrs if x.get("kind") == "InferenceClass"}


def load_hardware(path: Path) -> dict[str, dict]:
    """InferenceClass name -> spec, from every InferenceClass in ``path``."""
    if not path.is_file():
        raise InputError("--hardware", f"{path} is not a file; give a YAML file of InferenceClasses")
    out = {}
    try:
        docs = reader.load_all(reader.decode(path.read_bytes()))
    except (OSError, yaml.YAMLError) as err:
        raise InputError("--hardware", f"{path}: {' '.join(str(err).split())}") from None
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "InferenceClass":
            name = (doc.get("metadata") or {}).get("name")
            if not name:
                raise InputError("--hardware", f"{path}: an InferenceClass without metadata.name; name the class it replaces")
            out[name] = doc.get("spec") or {}
    if not out:
        raise InputError("--hardware", f"{path} holds no InferenceClass; list the classes whose real devices differ")
    return out


def _probe():
    """One live answer through a URL the lab's data plane serves (GET <url>v1/models)."""
    from modelplane.lab import probe
    return probe


def _lab(state: str, hardware: dict | None) -> dict:
    """simulate --lab: the lab's clusters replace the physical model (modelplane.lab.backend)."""
    from modelplane.lab import open_lab
    return {"physical": open_lab(state or None, hardware)}


def run(argv: list[str], stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    err = stderr or sys.stderr
    try:
        return _run(argv, stdout or sys.stdout, err)
    except (RecursionError, MemoryError) as e:
        print(f"modelplane simulate: {type(e).__name__}: the input is too deep or too large", file=err)
        return 1
    except Exception as e:  # noqa: BLE001 - one line, never a traceback; the soak counts these as bugs
        print(f"modelplane simulate: internal error: {type(e).__name__}: {' '.join(str(e).split())[:500]}", file=err)
        return 1


def _scenario(path: Path) -> list[scenario.Step]:
    try:
        return scenario.parse(path)
    except UnicodeDecodeError as e:
        data = e.object if isinstance(e.object, bytes) else b""
        raise InputError("--scenario", f"{path}: {reader.invalid_utf8(data, e)}") from None
    except (OSError, yaml.YAMLError) as e:
        raise InputError("--scenario", f"{path}: {' '.join(str(e).split())}") from None


def _run(argv: list[str], out: TextIO, err: TextIO) -> int:
    args = parser().parse_args(argv)
    if not args.directory.is_dir():
        print(f"modelplane simulate: {args.directory}: not a directory", file=err)
        return 2
    if args.output == "json" and args.show != "timeline":
        print("modelplane simulate: -o json prints the timeline; add --show timeline", file=err)
        return 2
    progress = for_stream(err, args.quiet)
    pool = FunctionPool()
    sim = None
    try:
        steps = _scenario(args.scenario) if args.scenario else []
        hardware = (published_hardware(args.directory) if args.hardware == PUBLISHED
                    else load_hardware(Path(args.hardware)) if args.hardware else None)
        lab = _lab(args.lab, hardware) if args.lab is not None else {}
        current: list[scenario.Step | None] = [None]

        def on_round(s, _n: int) -> None:
            if args.show != "timeline":
                return
            entry = scenario.timeline(s, current[0])
            progress.clear()
            print(json.dumps(entry) if args.output == "json" else scenario.timeline_text(entry), file=out, flush=True)

        sim = load(args.directory, pool, unready=set(args.unready), hardware=hardware, on_round=on_round,
                   progress=progress, **lab)
        outcome = sim.run(max_rounds=args.max_rounds)
        unsettled = [] if outcome.converged else [f"loading: still changing: {', '.join(outcome.still_changing)}"]
        runner = scenario.Runner(sim, args.scenario.parent if args.scenario else Path("."), args.max_rounds,
                                 on_step=lambda step: current.__setitem__(0, step))
        runner.play(steps)
        unsettled += runner.unsettled
    except (RenderError, InputError) as e:
        progress.done()
        print(f"modelplane simulate: {e}", file=err)
        return 1
    finally:
        # Stopping the function processes takes a while on a busy machine: say so.
        progress.phase("stopping functions")
        if sim is not None:
            sim.close()
        pool.close()
        # Blank for good before anything else is printed (the report, an error, the shell's prompt).
        progress.done()
    world = sim.world
    if args.show == "resources":
        out.write(report.resources(world))
    elif args.show != "timeline":
        state = "fixed point" if not unsettled else "no fixed point"
        print(f"# {len(world.xrs)} XRs reconciled in {sim.rounds} rounds ({state})", file=out)
        if args.show in ("placements", "all"):
            print("\n".join(report.placements(world)), file=out)
            print(file=out)
            print("\n".join(report.services(world)), file=out)
        if args.show in ("conditions", "all"):
            print(file=out)
            print("\n".join(report.conditions(world)), file=out)
        if args.show in ("capacity", "all"):
            print(file=out)
            print("\n".join(report.capacity(sim.physical)), file=out)
        if args.show == "routes":
            print("\n".join(report.routes(world, _probe() if args.lab is not None else None)), file=out)
        if args.show == "all":
            print(file=out)
            out.write(report.resources(world))
    if args.lab is not None:
        from modelplane.lab import warnings
        for line in warnings(sim.physical):
            print(f"modelplane simulate --lab: {line}", file=err)
    if unsettled:
        for line in unsettled:
            print(f"modelplane simulate: no fixed point after {args.max_rounds} rounds: {line}", file=err)
        return 1
    return 0
