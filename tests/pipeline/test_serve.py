"""`modelplane serve` as Crossplane runs it: a real process on a real port."""
from __future__ import annotations

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests import support

CLASS = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceClass",
    "metadata": {"name": "gke-l4-1x-g2"},
    "spec": {
        "devices": [
            {
                "name": "gpu",
                "driver": "gpu.nvidia.com",
                "count": 1,
                "claim": "DRA",
                "deviceClassName": "gpu.nvidia.com",
                "attributes": {"architecture": {"string": "Ada"}},
                "capacity": {"memory": {"value": "24Gi"}},
            }
        ]
    },
}


def _summary(rsp: fnv1.RunFunctionResponse) -> str:
    return support.status(rsp).get("summary", "")


def test_insecure_server_answers_run_function():
    with support.serve_process("compose-inference-class", "--insecure") as address:
        rsp = support.call(address, support.request(CLASS))
    assert support.fatal(rsp) is None
    assert _summary(rsp) == "1x gpu (gpu.nvidia.com, 24Gi memory)"
    assert rsp.desired.composite.ready == fnv1.READY_TRUE


def test_installed_function_name_is_accepted_and_env_names_the_function():
    with support.serve_process("", "--insecure", env={"MODELPLANE_FUNCTION": "modelplane-compose-inference-class"}) as address:
        rsp = support.call(address, support.request(CLASS))
    assert _summary(rsp).startswith("1x gpu")


def test_mtls_server_accepts_trusted_client_and_rejects_others(tmp_path):
    certs = support.make_certs(tmp_path / "certs")
    with support.serve_process("compose-inference-class", "--tls-certs-dir", str(tmp_path / "certs")) as address:
        trusted = grpc.ssl_channel_credentials(
            root_certificates=certs["ca.crt"], private_key=certs["client.key"], certificate_chain=certs["client.crt"]
        )
        rsp = support.call(address, support.request(CLASS), credentials=trusted, server_name="localhost")
        assert _summary(rsp).startswith("1x gpu")

        untrusted = grpc.ssl_channel_credentials(
            root_certificates=certs["ca.crt"], private_key=certs["bad.key"], certificate_chain=certs["bad.crt"]
        )
        with pytest.raises(grpc.RpcError) as err:
            support.call(address, support.request(CLASS), credentials=untrusted, server_name="localhost", timeout=3)
        assert err.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)

        no_client_cert = grpc.ssl_channel_credentials(root_certificates=certs["ca.crt"])
        with pytest.raises(grpc.RpcError):
            support.call(address, support.request(CLASS), credentials=no_client_cert, server_name="localhost", timeout=3)

        with pytest.raises(grpc.RpcError):
            support.call(address, support.request(CLASS), timeout=3)  # plaintext to a TLS port


def test_serve_refuses_to_start_without_certificates_or_insecure():
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "modelplane.cli", "serve", "compose-inference-class", "--address", "127.0.0.1:0"],
        capture_output=True, text=True, timeout=30, check=False,
    )
    assert proc.returncode != 0
    assert "--tls-certs-dir" in proc.stderr and "--insecure" in proc.stderr


def test_unknown_function_is_a_usage_error():
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "modelplane.cli", "serve", "compose-nothing", "--insecure"],
        capture_output=True, text=True, timeout=30, check=False,
    )
    assert proc.returncode == 2
    assert "unknown function 'compose-nothing'" in proc.stderr


def test_a_request_nested_deeper_than_protobuf_decodes_gets_a_fatal_naming_the_fix():
    deep: dict = {"leaf": 1}
    for _ in range(60):
        deep = {"x": deep}
    xr = {**CLASS, "spec": {**CLASS["spec"], "extra": deep}}
    with support.serve_process("compose-inference-class", "--insecure") as address:
        rsp = support.call(address, support.request(xr))
        assert support.fatal(rsp).startswith("spec: the resource nests deeper than protobuf decodes")
        assert _summary(support.call(address, support.request(CLASS))).startswith("1x gpu")  # still serving


def test_a_server_started_for_a_process_stops_when_that_process_dies_without_stopping_it(tmp_path):
    """render/simulate start servers for themselves; killed outright (no clean-up runs), they must not
    leave servers behind. The parent here starts one through FunctionPool, then exits at once."""
    import os
    import subprocess
    import sys
    import time

    parent = (
        "import os, sys, time\n"
        "from modelplane.render import FunctionPool\n"
        "pool = FunctionPool()\n"
        "pool.start([{'apiVersion': 'pkg.crossplane.io/v1', 'kind': 'Function',"
        " 'metadata': {'name': 'modelplane-compose-inference-class'}}], time.monotonic() + 60)\n"
        "print(next(iter(pool._processes.values()))[0].proc.pid, flush=True)\n"
        "os._exit(0)\n"
    )
    out = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=90, check=True)
    pid = int(out.stdout.strip())

    def alive() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        # Reparented to this test's process? (a subreaper) then reap it; else it is someone else's zombie.
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            return done == 0
        except ChildProcessError:
            with open(f"/proc/{pid}/stat") as stat:
                return stat.read().rsplit(")", 1)[1].split()[0] != "Z"

    deadline = time.monotonic() + 20
    while alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    try:
        assert not alive(), "the function server outlived the process that started it"
    finally:
        if alive():
            os.kill(pid, 9)


def test_the_response_ttl_is_sixty_seconds_unless_the_server_is_told_otherwise():
    with support.serve_process("compose-inference-class", "--insecure") as address:
        assert support.call(address, support.request(CLASS)).meta.ttl.seconds == 60
    with support.serve_process("compose-inference-class", "--insecure", "--ttl", "300") as address:
        assert support.call(address, support.request(CLASS)).meta.ttl.seconds == 300
    with support.serve_process("compose-inference-class", "--insecure",
                               env={"MODELPLANE_RESPONSE_TTL": "900"}) as address:
        assert support.call(address, support.request(CLASS)).meta.ttl.seconds == 900


def test_a_ttl_out_of_range_is_a_usage_error():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "modelplane.cli", "serve", "compose-inference-class", "--insecure",
                          "--ttl", "0"], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2 and "--ttl" in out.stderr and "1<=x<=86400" in out.stderr
