"""``modelplane e2e``: a control plane where real Crossplane reconciles Modelplane.

    modelplane e2e up [PLATFORM...] [--state DIR] [--simulate-lab DIR]
                                                    start it (returns once the Configuration is installed)
    modelplane e2e status [--state DIR]             processes and package health
    modelplane e2e down [--state DIR]               stop everything it started, by pid

With PLATFORM folders or files (e.g. examples/platform), ``up`` also starts
one lab workload cluster per InferenceCluster (``modelplane lab``), rewritten
as Existing clusters in ``<state>/fleet`` and registered with their kubeconfig
Secrets; then ``kubectl apply -f <state>/fleet`` and ``kubectl apply -f
examples/ml-team`` let Crossplane do the rest. The default state folder is
``~/.local/state/modelplane/e2e``; ``KUBECONFIG=<state>/control-plane/control-plane/kubeconfig``
talks to the control plane.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DEFAULT_STATE = Path.home() / ".local" / "state" / "modelplane" / "e2e"


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="modelplane e2e", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("up", "status", "down"))
    parser.add_argument("platform", nargs="*", type=Path, help="platform manifests for the lab (up only)")
    parser.add_argument("--state", type=Path, default=DEFAULT_STATE, help="state folder (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the packages (up)")
    parser.add_argument("--simulate-lab", action="append", type=Path, metavar="DIR",
                        help="(up, with PLATFORM) before the control plane starts, run `modelplane simulate --lab` "
                             "over the fleet and DIR (repeatable) on the lab's clusters, record it in "
                             "<state>/simulate-lab.json and empty the clusters again (the suite compares it "
                             "with what Crossplane does)")
    args = parser.parse_args(argv)
    from modelplane.e2e import controlplane
    from modelplane.e2e.upstream import MissingTool
    from modelplane.kube.process import ComponentError
    from modelplane.lab import LabError

    try:
        if args.action == "up":
            print(f"modelplane e2e: starting in {args.state}")
            if args.platform:
                rec, _ = controlplane.up_with_lab(args.platform, args.state, timeout=args.timeout,
                                                  simulate_lab=args.simulate_lab)
                print(f"fleet (as Existing clusters): {args.state.resolve() / 'fleet'}")
            else:
                rec = controlplane.up(args.state / "control-plane", timeout=args.timeout)
            print(f"ready: KUBECONFIG={rec.kubeconfig} kubectl get configurations,providers,functions,xrds")
        elif args.action == "status":
            print(json.dumps(controlplane.status(args.state / "control-plane"), indent=2))
        else:
            for name in controlplane.down_with_lab(args.state):
                print(f"stopped {name}")
    except (MissingTool, ComponentError, LabError, FileNotFoundError) as err:
        print(f"modelplane e2e {args.action}: {err}", file=sys.stderr)
        return 1
    return 0
