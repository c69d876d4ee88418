"""``modelplane engine-observer``: report what engine pods on this cluster say, per replica.

    modelplane engine-observer [--interval S] [--server URL] [--serviceaccount-dir DIR] [--once]

Runs in a pod of its own on a workload cluster (compose-inference-cluster installs it),
signed in as the pod's service account. Exit 2 when it cannot tell where its API
server is; SIGTERM and SIGINT stop it (exit 0).
"""
from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from pathlib import Path

from modelplane.observer import ConfigError, Observer, Settings, client
from modelplane.observer.incluster import SERVICEACCOUNT_DIR


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="modelplane engine-observer",
        description="Read the engine pods Modelplane composed on this cluster and write, per replica, a "
                    "ConfigMap in the replica's namespace saying what each engine does (state, restarts, "
                    "last exit and the tail of its message). The ModelReplica reads it back.")
    p.add_argument("--interval", metavar="S", type=float, default=10.0,
                   help="seconds between passes (default 10)")
    p.add_argument("--server", metavar="URL", default=None,
                   help="the API server (default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
    p.add_argument("--serviceaccount-dir", metavar="DIR", type=Path, default=SERVICEACCOUNT_DIR,
                   help=f"where the token and ca.crt are (default {SERVICEACCOUNT_DIR})")
    p.add_argument("--once", action="store_true", help="one pass, print what it did as JSON, and exit")
    return p


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.interval <= 0:
        print("modelplane engine-observer: --interval must be more than 0 seconds", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    try:
        api = client(args.server, args.serviceaccount_dir)
    except ConfigError as err:
        print(f"modelplane engine-observer: {err}", file=sys.stderr)
        return 2
    stop = threading.Event()
    observer = Observer(api, Settings(interval=args.interval), stop)
    if args.once:
        result = observer.once()
        print(json.dumps({"listed": result.listed, "written": result.written, "failed": result.failed}))
        return 1 if result.failed else 0
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    logging.getLogger("modelplane.engine-observer").info("observing engine pods at %s every %.0f s",
                                                         api.server, args.interval)
    observer.run()
    return 0
