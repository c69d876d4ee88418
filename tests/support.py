"""Shared test helpers: requests, free ports, function processes, certificates.

Every test that talks gRPC uses these, so a real server on a real port is as
cheap to write as an in-process call.
"""
from __future__ import annotations

import contextlib
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelplane import functions
from modelplane.pipeline.composition import to_dict
from modelplane.pipeline.server import run_compose

ROOT = Path(__file__).resolve().parent.parent



def request(
    xr: Mapping[str, Any],
    observed: Mapping[str, Mapping[str, Any]] | None = None,
    required: Mapping[str, list[Mapping[str, Any]]] | None = None,
    desired: Mapping[str, Mapping[str, Any]] | None = None,
) -> fnv1.RunFunctionRequest:
    """A RunFunctionRequest from plain dicts (required: name -> items)."""
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(dict(xr))
    for name, obj in (observed or {}).items():
        req.observed.resources[name].resource.update(dict(obj))
    for name, items in (required or {}).items():
        bucket = req.required_resources[name]
        for item in items:
            bucket.items.add().resource.update(dict(item))
    for name, obj in (desired or {}).items():
        req.desired.resources[name].resource.update(dict(obj))
    return req


def run(function: str, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    """Run a registered function in-process, through the real runtime."""
    return run_compose(function, functions.load(function), req)


def desired(rsp: fnv1.RunFunctionResponse) -> dict[str, dict]:
    return {name: to_dict(r.resource) for name, r in rsp.desired.resources.items()}


def status(rsp: fnv1.RunFunctionResponse) -> dict:
    return to_dict(rsp.desired.composite.resource).get("status") or {}


def fatal(rsp: fnv1.RunFunctionResponse) -> str | None:
    for r in rsp.results:
        if r.severity == fnv1.SEVERITY_FATAL:
            return r.message
    return None


def conditions(rsp: fnv1.RunFunctionResponse) -> dict[str, fnv1.Condition]:
    return {c.type: c for c in rsp.conditions}


@contextlib.contextmanager
def serve_process(function: str, *extra: str, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """Start ``modelplane serve`` as a real subprocess; yield its address."""
    with serve_popen(function, *extra, env=env) as (_, address):
        yield address


def wait_for_address(proc: subprocess.Popen, address_file: Path, wait: float) -> str:
    """The address a ``serve --address-file`` process wrote, once it listens (``wait`` bounds a
    start on a busy machine: it guards a hang and is not what a test judges)."""
    deadline = time.monotonic() + wait
    while not address_file.exists():
        if proc.poll() is not None:
            raise RuntimeError(f"serve exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"serve did not start listening within {wait:.0f}s")
        time.sleep(0.05)
    return address_file.read_text().strip()


@contextlib.contextmanager
def serve_popen(function: str, *extra: str, env: Mapping[str, str] | None = None,
                wait: float = 60.0) -> Iterator[tuple[subprocess.Popen, str]]:
    """``serve_process`` that also yields the process (for its pid: the benchmarks read its memory).

    ``wait`` bounds a start on a busy machine (it ends as soon as the port listens): generous,
    because it is not what a test judges."""
    # Port 0 and --address-file: the server says which port it got, so no other server can be
    # mistaken for it (a port picked beforehand could be taken first).
    files = tempfile.TemporaryDirectory(prefix="modelplane-serve-")
    address_file = Path(files.name) / "address"
    cmd = [sys.executable, "-m", "modelplane.cli", "serve", *([function] if function else []),
           "--address", "127.0.0.1:0", "--address-file", str(address_file), *extra]
    proc = subprocess.Popen(
        cmd, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        address = wait_for_address(proc, address_file, wait)
        yield proc, address
    finally:
        files.cleanup()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def call(address: str, req: fnv1.RunFunctionRequest, credentials: grpc.ChannelCredentials | None = None,
         timeout: float = 60.0, server_name: str | None = None) -> fnv1.RunFunctionResponse:
    """One RunFunction over a real gRPC channel (``timeout``: a hang guard, generous so that a busy
    machine never turns a slow answer into DEADLINE_EXCEEDED)."""
    options = [("grpc.ssl_target_name_override", server_name)] if server_name else []
    channel = (
        grpc.secure_channel(address, credentials, options=options)
        if credentials
        else grpc.insecure_channel(address)
    )
    with channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        return stub.RunFunction(req, timeout=timeout, wait_for_ready=True)


def make_certs(directory: Path) -> dict[str, bytes]:
    """A CA, a server certificate for localhost and a client certificate.

    Writes tls.crt/tls.key/ca.crt (the layout Crossplane mounts) and returns
    the PEM bytes, including an untrusted client pair signed by another CA.
    """
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)

    def key():
        return ec.generate_private_key(ec.SECP256R1())

    def pem_key(k):
        return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption())

    def cert(subject_key, cn, issuer_key=None, issuer_name=None, ca=False, san=None):
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
        builder = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(issuer_name or name)
            .public_key(subject_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        return builder.sign(issuer_key or subject_key, hashes.SHA256())

    ca_key = key()
    ca_cert = cert(ca_key, "modelplane-test-ca", ca=True)
    srv_key = key()
    srv_cert = cert(srv_key, "localhost", ca_key, ca_cert.subject,
                    san=[x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cli_key = key()
    cli_cert = cert(cli_key, "crossplane", ca_key, ca_cert.subject)
    other_ca_key = key()
    other_ca = cert(other_ca_key, "someone-else", ca=True)
    bad_key = key()
    bad_cert = cert(bad_key, "intruder", other_ca_key, other_ca.subject)

    pem = lambda c: c.public_bytes(serialization.Encoding.PEM)
    out = {
        "ca.crt": pem(ca_cert), "tls.crt": pem(srv_cert), "tls.key": pem_key(srv_key),
        "client.crt": pem(cli_cert), "client.key": pem_key(cli_key),
        "bad.crt": pem(bad_cert), "bad.key": pem_key(bad_key),
    }
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("ca.crt", "tls.crt", "tls.key"):
        (directory / name).write_bytes(out[name])
    return out


class KubectlCalls:
    """kubectl against a real cluster, for suite fixtures that carry ``kubectl_bin`` and ``kubeconfig``
    (the e2e-crossplane and install suites): a failing call is an AssertionError with kubectl's words."""

    kubectl_bin: Path
    kubeconfig: Path

    def kubectl(self, *args: str, kubeconfig: Path | None = None, check: bool = True, timeout: float = 120,
                stdin: str | None = None) -> str:
        done = subprocess.run([str(self.kubectl_bin), f"--kubeconfig={kubeconfig or self.kubeconfig}", *args],
                              capture_output=True, text=True, timeout=timeout, check=False, input=stdin)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
        return done.stdout

    def get(self, *args: str, kubeconfig: Path | None = None) -> dict:
        return json.loads(self.kubectl("get", *args, "-o", "json", kubeconfig=kubeconfig))


def poll_until(what: str, probe, timeout: float, every: float):
    """Poll ``probe`` until it returns something truthy that is not a string; an AssertionError or a
    string is its last answer, printed when ``timeout`` (a hang guard, never the verdict) passes."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except AssertionError as err:
            last = str(err)
        else:
            if last and not isinstance(last, str):
                return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}: {last}")
