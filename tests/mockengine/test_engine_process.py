"""``modelplane mock-engine`` as a real process (python -m modelplane.cli mock-engine)."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from tests.mockengine.client import call, chat, connect, free_port

COMMAND = [sys.executable, "-m", "modelplane.cli", "mock-engine"]


@contextmanager
def running(*args: str) -> Iterator[tuple[subprocess.Popen, int]]:
    """The mock engine on a free port (``--listen 127.0.0.1:PORT`` first), ready; killed if still up."""
    port = free_port()
    proc = subprocess.Popen([*COMMAND, "--listen", f"127.0.0.1:{port}", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60   # a start on a busy machine; not the verdict
        while True:
            try:
                if call(connect(port, timeout=1), "GET", "/health").status == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"mock-engine did not come up: {proc.communicate()}")
            time.sleep(0.05)
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# A stop the server held up would wait out the engine's 10 s read timeout (an open keep-alive
# connection); a prompt one takes well under a second, and a busy machine gets the rest.
PROMPT_STOP_S = 8


def _stop(proc: subprocess.Popen) -> tuple[int, float, str, str]:
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=10)
    return proc.returncode, time.monotonic() - t0, out, err


def test_serves_from_argv_and_stops_on_sigterm():
    with running("--cluster", "prod-a", "--", "vllm", "serve", "m", "--served-model-name", "x") as (proc, port):
        conn = connect(port)
        r = call(conn, "POST", "/v1/chat/completions", chat())
        assert (r.status, r.json()["choices"][0]["message"]["content"]) == (200, "mock answer from mock-engine (x)")
        assert r.answered_by == "cluster=prod-a"
        assert call(conn, "POST", "/v1/chat/completions", chat("m")).status == 404, "only served names answer"
        # an open keep-alive connection must not hold the process up
        code, took, out, err = _stop(proc)
    assert (code, err) == (0, "")
    assert took < PROMPT_STOP_S
    assert out.startswith(f"mock-engine: vllm serving x on 127.0.0.1:{port} as cluster=prod-a")


def test_serves_a_pod_manifest(tmp_path: Path):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "qwen-7f9-0", "namespace": "ml-team",
                        "labels": {"modelplane.ai/deployment": "qwen", "modelplane.ai/replica": "2",
                                   "modelplane.ai/revision": "5d8", "modelplane.ai/engine": "sglang"}},
           "spec": {"containers": [{"name": "engine", "image": "lmsysorg/sglang:v0.5.19",
                                    "command": ["python3", "-m", "sglang.launch_server"],
                                    "args": ["--model-path=Qwen/Qwen3-32B", "--served-model-name=qwen3-32b",
                                             "--port=8000"],
                                    "ports": [{"containerPort": 8080}]}]}}
    f = tmp_path / "pod.yaml"
    f.write_text(yaml.safe_dump(pod))
    with running("--pod", str(f), "--cluster", "prod-b") as (proc, port):
        r = call(connect(port), "POST", "/v1/completions", {"model": "qwen3-32b", "prompt": "hi"})
        metrics = call(connect(port), "GET", "/metrics").body.decode()
        code, _, _, err = _stop(proc)
    assert r.answered_by == "cluster=prod-b,namespace=ml-team,pod=qwen-7f9-0,deployment=qwen,replica=2,revision=5d8"
    assert r.json()["modelplane"]["engine"] == "sglang"
    assert 'sglang:num_requests_total{model_name="qwen3-32b"} 1.0' in metrics
    assert code == 0
    assert "warning: container 'engine' declares port(s) 8080 but the engine listens on 8000" in err


def test_print_config_and_the_engine_port():
    out = subprocess.run([*COMMAND, "--print-config", "--listen", "0.0.0.0", "--", "sh", "-c",
                          "exec vllm serve /mnt/models --served-model-name=qwen3-coder --port=8001"],
                         check=False, capture_output=True, text=True, timeout=30)
    got = json.loads(out.stdout)
    assert out.returncode == 0
    assert (got["engine"], got["served_names"], got["listen"]) == ("vllm", ["qwen3-coder"], "0.0.0.0:8001")


@pytest.mark.parametrize("argv,want", [
    (["--", "trtllm-serve", "/mnt/models"], ("the command line runs no engine the mock understands: "
                                              "trtllm-serve /mnt/models; expected `vllm serve MODEL`")),
    ([], "say what the container runs"),
    (["--image", "nginx:1", "--", "--model=m"], "the command line: no command, and image 'nginx:1' has no entrypoint the mock knows"),
    (["--token-delay", "61", "--", "vllm", "serve", "m"], "--token-delay 61: give seconds from 0 to 60"),
], ids=["an unknown engine", "nothing to run", "args for an unknown image", "a token delay out of range"])
def test_refuses_with_exit_2(argv, want):
    out = subprocess.run([*COMMAND, *argv], check=False, capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert out.stderr.startswith(f"modelplane mock-engine: {want}")


def test_a_headless_worker_idles_until_stopped():
    proc = subprocess.Popen([*COMMAND, "--", "vllm", "serve", "m", "--headless"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().startswith("mock-engine: vllm worker of a multi-node group serves no HTTP")
        code, took, _, err = _stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (code, err) == (0, "") and took < PROMPT_STOP_S
