"""The ``modelplane`` command: a thin layer over lib.

    modelplane serve [FUNCTION]      the gRPC server Crossplane runs
    modelplane render XR COMP FNS    crossplane render, in Python
    modelplane simulate DIR          the whole fleet on one machine
    modelplane validate FILE|DIR...  offline admission checks
    modelplane demo [DIR]            simulate the example fleet, summarised
    modelplane lab up DIR|status|down  local workload clusters (upstream programs, fake GPUs)
    modelplane mock-engine [-- ARGV]  an OpenAI-compatible mock engine for the lab (no weights)
    modelplane engine-observer       what engine pods say, per replica (runs on a workload cluster)

Each subcommand lives in its own module and takes ``argv``; this module only
dispatches, so ``modelplane --help`` stays cheap to import: ``render``,
``simulate``, ``validate``, ``demo``, ``lab``, ``e2e``, ``mock_engine``, ``engine_observer``. This is the one
package allowed to import every layer (``modelplane.LAYERS``). Every command
ends quietly with status 141 when the reader of its output goes away
(``modelplane simulate DIR | head``; ``pipe``).
"""
from __future__ import annotations

import importlib
import sys

import click
from crossplane.function import cli as sdkcli

from modelplane.cli import pipe

# name -> (module, one-line help). Modules expose run(argv) -> int.
SUBCOMMANDS = {
    "render": ("modelplane.cli.render", "Render an XR through its Composition (crossplane render parity)"),
    "simulate": ("modelplane.cli.simulate", "Reconcile a whole fleet of manifests on this machine"),
    "validate": ("modelplane.cli.validate", "Validate manifests against the XRDs and upstream schemas"),
    "demo": ("modelplane.cli.demo", "Simulate the example fleet and print a short summary"),
    "e2e": ("modelplane.cli.e2e", "A control plane where real Crossplane reconciles Modelplane"),
    "lab": ("modelplane.cli.lab", "Local workload clusters with fake GPU nodes (up DIR | status | down)"),
    "mock-engine": ("modelplane.cli.mock_engine", "An OpenAI-compatible mock engine for the lab (no weights)"),
    "engine-observer": ("modelplane.cli.engine_observer",
                        "Report what engine pods say, per replica (runs on each workload cluster)"),
}


@click.command("serve", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("function", required=False, envvar="MODELPLANE_FUNCTION")
@sdkcli.standard_options
@click.option("--ttl", "ttl", type=click.IntRange(1, 86400), default=60, show_default=True,
              envvar="MODELPLANE_RESPONSE_TTL", metavar="SECONDS",
              help="Response TTL: with realtime compositions Crossplane reconciles each XR again after it. "
                   "Longer means fewer calls at rest in a large fleet, and new capacity seen later; "
                   "time-based decisions (failover, drain) still shorten it. Env: MODELPLANE_RESPONSE_TTL.")
@click.option("--address-file", "address_file", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="FILE",
              help="Once listening, write host:port to FILE (with --address 127.0.0.1:0, the port the kernel "
                   "chose): how a program that starts the server learns its port without racing for one.")
@click.option("--shutdown-grace", "grace", type=click.FloatRange(0, 3600), default=5.0, show_default=True,
              envvar="MODELPLANE_SHUTDOWN_GRACE", metavar="SECONDS",
              help="After SIGTERM, how long calls in flight may take to finish before they are cancelled "
                   "(keep it below the pod's terminationGracePeriodSeconds). Env: MODELPLANE_SHUTDOWN_GRACE.")
def serve_command(function, debug, address, tls_certs_dir, insecure, max_recv_message_size, max_send_message_size,
                  ttl, address_file, grace):
    """Serve FUNCTION (or $MODELPLANE_FUNCTION) over gRPC, as Crossplane runs it."""
    from modelplane import functions
    from modelplane.pipeline import server

    if not function:
        raise click.UsageError("name the function to serve, or set MODELPLANE_FUNCTION")
    try:
        compose = functions.load(function)
    except KeyError as err:
        raise click.UsageError(str(err.args[0])) from None
    server.serve(
        functions.canonical(function),
        compose,
        address=address,
        tls_certs_dir=tls_certs_dir,
        insecure=insecure,
        debug=debug,
        max_recv_message_size=max(max_recv_message_size, server.DEFAULT_MAX_RECV_MB),
        max_send_message_size=max_send_message_size,
        ttl_seconds=ttl,
        address_file=address_file,
        grace=grace,
    )


def _usage() -> str:
    lines = ["usage: modelplane COMMAND [ARGS]...", "", "commands:", "  serve     Serve a composition function over gRPC"]
    lines += [f"  {name:<9} {help_}" for name, (_, help_) in SUBCOMMANDS.items()]
    lines += ["", "Run 'modelplane COMMAND --help' for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit status (141, quietly, when the reader of stdout or stderr goes away)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return pipe.guarded(lambda: _dispatch(argv))


def _dispatch(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "serve":
        serve_command.main(args=rest, prog_name="modelplane serve", standalone_mode=True)
        return 0
    if command not in SUBCOMMANDS:
        print(f"modelplane: unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(SUBCOMMANDS[command][0])
    return int(module.run(rest) or 0)
