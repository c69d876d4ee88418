"""``modelplane mock-engine``: an OpenAI-compatible mock engine for the lab (no weights).

    modelplane mock-engine [--listen HOST[:PORT]] [--pod FILE|-] [--container NAME]
                           [--cluster NAME] [--image IMAGE] [--service-time S] [--token-delay S]
                           [--max-running N] [--ready-after S] [--print-config] [-- ARGV...]

ARGV (or the pod's container) says which engine to imitate and what it serves;
exit 2 when it runs no engine the mock understands. SIGTERM and SIGINT stop it
(exit 0).
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

import yaml

from modelplane.mockengine import (
    ConfigError,
    EngineConfig,
    Identity,
    MockEngine,
    Options,
    from_argv,
    from_pod,
    identity_from_pod,
)
from modelplane.mockengine.config import find_invocation
from modelplane.mockengine.server import MAX_TOKEN_DELAY


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="modelplane mock-engine",
        usage="modelplane mock-engine [options] [-- ARGV...]",
        description="An OpenAI-compatible mock of the engine a pod's container runs (vLLM or SGLang): its "
                    "served model names, port, metric names and error shapes, no weights. ARGV is the "
                    "container's command and args; or read them from a pod manifest with --pod.",
    )
    p.add_argument("--listen", metavar="HOST[:PORT]", default=None,
                   help="where to listen (default the engine's own --host and --port; a HOST alone keeps the "
                        "engine's port)")
    p.add_argument("--pod", metavar="FILE|-", default=None,
                   help="a pod manifest (JSON or YAML; - for stdin): its container's command, args, env and "
                        "image, and who it is (name, namespace, modelplane.ai/* labels)")
    p.add_argument("--container", metavar="NAME", default=None,
                   help="the pod's container to imitate (default the one named engine, else the first)")
    p.add_argument("--cluster", metavar="NAME", default="", help="the cluster named in the answered-by header")
    p.add_argument("--image", metavar="IMAGE", default="",
                   help="with ARGV: the container image; ARGV that run no engine are then args to the image's "
                        "entrypoint (vllm/vllm-openai: vllm serve)")
    p.add_argument("--service-time", metavar="S", type=float, default=0.0,
                   help="seconds each request takes (streaming: spread over the tokens); default 0")
    p.add_argument("--token-delay", metavar="S", type=float, default=0.0,
                   help="seconds before each token, on top of --service-time (a request's X-Mock-Token-Delay "
                        "header sets its own); default 0")
    p.add_argument("--max-running", metavar="N", type=int, default=0,
                   help="requests served at once; more wait and count as waiting (default 0: no limit)")
    p.add_argument("--ready-after", metavar="S", type=float, default=0.0,
                   help="GET /health answers 503 for S seconds after start (default 0)")
    p.add_argument("--access-log", action="store_true", help="one stderr line per request")
    p.add_argument("--print-config", action="store_true",
                   help="print what the engine would serve, as JSON, and exit")
    return p


def _listen(value: str | None, config: EngineConfig) -> tuple[str, int]:
    if not value:
        return config.host, config.port
    host, sep, port = value.rpartition(":")
    if not sep or "]" in port:   # no port given (or a bare [v6] address)
        return value.strip("[]"), config.port
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise ConfigError(f"--listen {value!r}: the port must be a number from 0 to 65535")
    return host.strip("[]"), int(port)


def _read_pod(source: str) -> dict[str, Any]:
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    try:
        pod = yaml.safe_load(text)   # YAML is a superset of JSON
    except yaml.YAMLError as err:
        raise ConfigError(f"--pod {source}: not JSON or YAML: {err}") from None
    if not isinstance(pod, dict):
        raise ConfigError(f"--pod {source}: not a pod manifest (an object with spec.containers)")
    return pod


def configure(args: argparse.Namespace, argv: list[str]) -> tuple[EngineConfig, Identity]:
    if args.pod and argv:
        raise ConfigError("give --pod FILE or -- ARGV, not both")
    if args.pod:
        pod = _read_pod(args.pod)
        return from_pod(pod, args.container), identity_from_pod(pod, args.cluster)
    if not argv:
        raise ConfigError("say what the container runs: -- ARGV (e.g. -- vllm serve MODEL) or --pod FILE")
    # With an image, ARGV that run no program are its args (`--image vllm/vllm-openai -- MODEL --port=...`).
    args_only = bool(args.image) and find_invocation(argv) is None
    return from_argv(argv, args.image, args_only=args_only), Identity(cluster=args.cluster)


def run(argv: list[str], stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    own, engine_argv = (argv[: argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    args = parser().parse_args(own)
    try:
        if not 0.0 <= args.token_delay <= MAX_TOKEN_DELAY:
            raise ConfigError(f"--token-delay {args.token_delay:g}: give seconds from 0 to {MAX_TOKEN_DELAY:g}")
        config, identity = configure(args, engine_argv)
        host, port = _listen(args.listen, config)
    except (ConfigError, OSError) as e:
        print(f"modelplane mock-engine: {e}", file=err)
        return 2
    for warning in config.warnings:
        print(f"modelplane mock-engine: warning: {warning}", file=err)
    if args.print_config:
        shown = {k: v for k, v in config.__dict__.items() if k not in ("argv", "warnings")}
        print(json.dumps({**shown, "listen": f"{host}:{port}", "answered_by": identity.header()}, indent=2),
              file=out)
        return 0

    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        if not config.serves_http:
            print(f"mock-engine: {config.engine} worker of a multi-node group serves no HTTP; idle until stopped",
                  file=out, flush=True)
            while not stop.wait(0.5):
                pass
            return 0
        options = Options(service_time=max(0.0, args.service_time), token_delay=args.token_delay,
                          max_running=max(0, args.max_running),
                          ready_after=max(0.0, args.ready_after), access_log=args.access_log)
        try:
            engine = MockEngine(config, identity, host, port, options).start()
        except OSError as e:
            print(f"modelplane mock-engine: cannot listen on {host or '*'}:{port}: {e}", file=err)
            return 1
        with engine:
            print(f"mock-engine: {config.engine} serving {', '.join(config.served_names)} on "
                  f"{host or '*'}:{engine.port}" + (f" as {identity.header()}" if identity.header() else ""),
                  file=out, flush=True)
            while not stop.wait(0.5):
                pass
        return 0
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
