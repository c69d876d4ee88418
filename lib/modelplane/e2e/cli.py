"""``modelplane e2e``: a control plane where real Crossplane reconciles Modelplane.

    modelplane e2e up [--state DIR]       start it (returns once the Configuration is installed)
    modelplane e2e status [--state DIR]   processes and package health
    modelplane e2e down [--state DIR]     stop everything it started, by pid

The default state folder is ``.modelplane/e2e`` in the working directory;
``KUBECONFIG=<state>/control-plane/kubeconfig kubectl ...`` talks to it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DEFAULT_STATE = Path(".modelplane") / "e2e"


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="modelplane e2e", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("up", "status", "down"))
    parser.add_argument("--state", type=Path, default=DEFAULT_STATE, help="state folder (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the packages (up)")
    args = parser.parse_args(argv)
    from modelplane.e2e import controlplane
    from modelplane.e2e.upstream import MissingTool
    from modelplane.kube.process import ComponentError

    try:
        if args.action == "up":
            print(f"modelplane e2e: starting the control plane in {args.state}")
            rec = controlplane.up(args.state, timeout=args.timeout)
            print(f"ready: KUBECONFIG={rec.kubeconfig} kubectl get configurations,providers,functions,xrds")
        elif args.action == "status":
            print(json.dumps(controlplane.status(args.state), indent=2))
        else:
            for name in controlplane.down(args.state):
                print(f"stopped {name}")
    except (MissingTool, ComponentError, FileNotFoundError) as err:
        print(f"modelplane e2e {args.action}: {err}", file=sys.stderr)
        return 1
    return 0
