"""``modelplane lab up DIR | status | down | cluster-down NAME | cluster-up NAME``: local workload
clusters with fake GPU nodes, and one of them taken down whole to practise failover."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

from modelplane import lab
from modelplane.errors import InputError
from modelplane.kube import ApiError
from modelplane.lab import default_dir


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="modelplane lab",
        description="Real workload clusters on this machine (kube-apiserver, kube-controller-manager, "
                    "kube-scheduler with DRA, kwok, LeaderWorkerSet) shaped like the InferenceClusters in DIR. "
                    "Needs the upstream programs of `make tools`.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    state_help = f"the lab's state folder (default $MODELPLANE_LAB_STATE or {default_dir()})"
    u = sub.add_parser("up", help="start one cluster per InferenceCluster in DIR")
    u.add_argument("directory", metavar="DIR", type=Path, help="manifests with InferenceClusters and InferenceClasses")
    u.add_argument("--state", type=Path, default=None, help=state_help)
    u.add_argument("--no-data-plane", action="store_true",
                   help="no network namespace, no Traefik, no engines (no root needed; nothing answers requests)")
    u.add_argument("--timeout", type=float, default=lab.READY_TIMEOUT, metavar="S",
                   help=f"give up when not ready after S seconds (default {lab.READY_TIMEOUT:.0f})")
    s = sub.add_parser("status", help="every lab process: pid, alive, port, memory; a crashed one with its log")
    s.add_argument("--state", type=Path, default=None, help=state_help)
    d = sub.add_parser("down", help="stop every process the lab started")
    d.add_argument("--state", type=Path, default=None, help=state_help)
    cd = sub.add_parser("cluster-down", help="take one lab cluster down whole (its API server, gateway and "
                                             "engines stop; etcd keeps its objects), to practise failover")
    cu = sub.add_parser("cluster-up", help="bring back a cluster that cluster-down stopped")
    for c in (cd, cu):
        c.add_argument("name", metavar="NAME", help="the lab cluster (an InferenceCluster's name)")
        c.add_argument("--state", type=Path, default=None, help=state_help)
    return p


def run(argv: list[str], stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    args = parser().parse_args(argv)
    if args.command == "up":
        return _up(args, out, err)
    if args.command == "status":
        return _status(args, out, err)
    if args.command in ("cluster-down", "cluster-up"):
        return _outage(args, out, err)
    stopped = lab.down(args.state)
    print(f"stopped {len(stopped)} processes" + (f": {', '.join(stopped)}" if stopped else " (no lab running)"),
          file=out)
    return 0


def _up(args, out: TextIO, err: TextIO) -> int:
    if not args.directory.is_dir():
        print(f"modelplane lab up: {args.directory}: not a directory", file=err)
        return 2
    try:
        state = lab.up(args.directory, args.state, timeout=args.timeout,
                       data_plane=False if args.no_data_plane else None,
                       progress=lambda msg: print(msg, file=out, flush=True))
    except InputError as e:
        print(f"modelplane lab up: {e}", file=err)
        return 2
    except (RuntimeError, ApiError, TimeoutError, FileNotFoundError) as e:  # LabError, ComponentError, no cryptography
        print(f"modelplane lab up: {e}", file=err)
        return 1
    print(f"\nstate: {state.root}", file=out)
    for name, info in sorted(state.clusters.items()):
        print(f"  {name}: kubeconfig {info.kubeconfig}", file=out)
        ref = info.secret_ref
        print(f"  {' ' * len(name)}  Secret {ref['namespace']}/{ref['name']} (key {ref['key']}): {info.secret}", file=out)
        if info.gateway:
            print(f"  {' ' * len(name)}  gateway http://{info.gateway}/ (Traefik, GatewayClass {lab.GATEWAY_CLASS})",
                  file=out)
    if state.control_plane is not None:
        print(f"  control plane: kubeconfig {state.control_plane.kubeconfig}, gateway http://"
              f"{state.control_plane.gateway}/", file=out)
    return 0


def _status(args, out: TextIO, err: TextIO) -> int:
    state, rows = lab.status(args.state)
    if state is None:
        print("no lab here (modelplane lab up DIR starts one)", file=out)
        return 3
    print(f"lab from {state.directory} (state {state.root}); ready in {state.ready_seconds} s", file=out)
    width = max(len(r.label) for r in rows) if rows else 9
    print(f"{'COMPONENT':<{width}}  {'PID':>7}  ALIVE  {'PORT':>5}  {'RSS':>8}", file=out)
    for r in rows:
        rss = f"{r.rss_kib / 1024:.0f} MiB" if r.alive else "-"
        alive = "yes" if r.alive else "down" if r.down else "NO"
        print(f"{r.label:<{width}}  {r.pid:>7}  {alive:<5}  {r.port or '-':>5}  {rss:>8}", file=out)
    total = sum(r.rss_kib for r in rows)
    print(f"{'total':<{width}}  {'':>7}  {'':<5}  {'':>5}  {total / 1024:>4.0f} MiB", file=out)
    for name, outage in sorted(state.outages.items()):
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(outage.since))
        print(f"cluster {name} is down since {since} (taken down on purpose; "
              f"`modelplane lab cluster-up {name}` brings it back)", file=out)
    crashed = [r for r in rows if not r.alive and not r.down]
    for r in crashed:
        print(f"\n{r.label} is not running (log: {r.log}):\n{r.tail}", file=err)
    return 1 if crashed else 0


def _outage(args, out: TextIO, err: TextIO) -> int:
    act = lab.cluster_down if args.command == "cluster-down" else lab.cluster_up
    try:
        done = act(args.name, args.state)
    except lab.OutageError as e:
        print(f"modelplane lab {args.command}: {e}", file=err)
        return 1
    verb = "stopped" if args.command == "cluster-down" else "started"
    print(f"{args.name}: {verb} {', '.join(done) or 'nothing'}", file=out)
    if args.command == "cluster-down":
        print(f"{args.name} is down: its API server refuses connections and its gateway answers nothing; "
              f"`modelplane lab cluster-up {args.name}` brings it back", file=out)
    return 0
