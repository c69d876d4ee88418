"""Shared pieces of the render tests: the fixture function process and case runner."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import grpc
from modelplane.kube.net import free_port

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
SCRIPT_FN = HERE / "fixtures" / "script_fn.py"
TARGET_ANNOTATION = "render.crossplane.io/runtime-development-target"
UPDATE = os.environ.get("MODELPLANE_UPDATE_GOLDENS") == "1"



@contextmanager
def script_function():
    """Run fixtures/script_fn.py as a real server; yields its target."""
    target = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT_FN), "--insecure", "--address", target],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with grpc.insecure_channel(target) as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
        yield target
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def case_names() -> list[str]:
    return sorted(p.name for p in CASES.iterdir() if p.is_dir())


def case_argv(name: str, target: str) -> list[str]:
    """XR COMPOSITION FUNCTIONS, the fixture target, then the case's own flags."""
    d = CASES / name
    # A case with its own functions.yaml runs Modelplane's functions (started locally by render).
    own = d / "functions.yaml"
    argv = [str(d / "xr.yaml"), str(d / "composition.yaml"), str(own if own.exists() else CASES / "functions.yaml")]
    argv += ["-a", f"{TARGET_ANNOTATION}={target}"]
    args = d / "args"
    if args.exists():
        argv += [line.replace("{case}", str(d)) for line in args.read_text().splitlines() if line]
    return argv


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    from modelplane.cli import render as cli

    out, err = io.StringIO(), io.StringIO()
    code = cli.run(argv, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def wait_gone(pid: int, timeout: float = 10) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False
