"""modelplane.kube.tools (finding upstream programs) and the pieces of modelplane.kube that
need no upstream program: certificates, kubeconfig, child processes."""
from __future__ import annotations

import base64
import json
import stat
import sys
import time

import pytest
import yaml
from modelplane.kube import kubeconfig, pki, tools
from modelplane.kube.process import ComponentError, Process


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MODELPLANE_TOOLS_DIR", str(tmp_path))
    for name in tools.KNOWN:
        monkeypatch.delenv(tools.env_var(name), raising=False)
    return tmp_path


def executable(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_env_var_names():
    assert tools.env_var("kube-apiserver") == "KUBE_APISERVER_BIN"
    assert tools.env_var("crossplane") == "CROSSPLANE_BIN"


def test_nothing_built(cache):
    assert tools.find("etcd") is None
    assert tools.missing("etcd", "kubectl") == "etcd, kubectl not built: run `make tools` (or set ETCD_BIN)"


def test_manifest_entry(cache):
    etcd = executable(cache / "etcd-v3.6.5" / "etcd")
    (cache / "tools.json").write_text(json.dumps({"etcd": str(etcd), "kubectl": str(cache / "gone")}))
    assert tools.find("etcd") == etcd
    assert tools.find("kubectl") is None  # listed but deleted since: not found
    assert tools.missing("etcd") is None
    assert tools.missing("etcd", "kubectl").startswith("kubectl not built")


def test_broken_manifest_is_no_manifest(cache):
    (cache / "tools.json").write_text("{half")
    assert tools.manifest() == {}
    (cache / "tools.json").write_text("[1]")
    assert tools.manifest() == {}


def test_override_wins(cache, monkeypatch):
    built = executable(cache / "crossplane-v2.2.1" / "crossplane")
    mine = executable(cache / "elsewhere" / "crank")
    (cache / "tools.json").write_text(json.dumps({"crossplane": str(built)}))
    monkeypatch.setenv("CROSSPLANE_BIN", str(mine))
    assert tools.find("crossplane") == mine


def test_override_to_nothing_is_an_error(cache, monkeypatch):
    monkeypatch.setenv("KUBECTL_BIN", str(cache / "nope"))
    with pytest.raises(FileNotFoundError, match="KUBECTL_BIN=.*no executable file"):
        tools.find("kubectl")


def test_certificates_chain_to_the_ca():
    from cryptography import x509

    ca = pki.CA("test-ca")
    leaf = ca.issue("admin", organizations=("system:masters",), dns=("localhost",), ips=("127.0.0.1",),
                    server=True, client=True)
    ca_cert, cert = x509.load_pem_x509_certificate(ca.cert), x509.load_pem_x509_certificate(leaf.cert)
    cert.verify_directly_issued_by(ca_cert)
    assert cert.subject.rfc4514_string() == "CN=admin,O=system:masters"
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(i) for i in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]


def test_pair_files_and_kubeconfig(tmp_path):
    ca = pki.CA()
    pair = ca.issue("admin", client=True)
    crt, key = pair.write(tmp_path, "admin")
    assert crt.read_bytes() == pair.cert and stat.S_IMODE(key.stat().st_mode) == 0o600
    path = kubeconfig.write(tmp_path / "kubeconfig", kubeconfig.build("lab", "https://127.0.0.1:6443",
                                                                      ca.cert, pair.cert, pair.key))
    cfg = yaml.safe_load(path.read_text())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert cfg["current-context"] == "lab"
    assert cfg["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:6443"
    assert base64.b64decode(cfg["users"][0]["user"]["client-key-data"]) == pair.key


def test_process_exit_before_ready_shows_its_log(tmp_path):
    p = Process("fails", [sys.executable, "-c", "print('listen tcp: address already in use'); raise SystemExit(3)"],
                tmp_path / "fails.log")
    with pytest.raises(ComponentError, match=r"(?s)fails exited with code 3 before it was ready.*address already"):
        p.wait_ready(lambda: False, timeout=60)  # ends when it exits: generous, not the verdict
    assert p.bind_failed()


def test_process_ready_then_stopped(tmp_path):
    flag = tmp_path / "up"
    p = Process("sleeper", [sys.executable, "-c", (f"import pathlib,time; pathlib.Path({str(flag)!r}).touch(); "
                                                  "time.sleep(60)")], tmp_path / "sleeper.log")
    assert p.wait_ready(flag.exists, timeout=60) >= 0
    assert p.stop() == -15  # SIGTERM
    assert not p.alive()


_COUNTS_TERMS = (
    "import pathlib, signal, sys, time\n"
    "log, flag = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])\n"
    "def term(*_):\n"
    "    with log.open('a') as f: f.write('TERM\\n')\n"
    "    time.sleep(0.5)\n"  # a shutdown that takes a while
    "    raise SystemExit(0)\n"
    "signal.signal(signal.SIGTERM, term)\n"
    "flag.touch()\n"
    "time.sleep(60)\n"
)


def test_terminate_sends_one_sigterm_and_stop_then_only_waits(tmp_path):
    """``terminate`` lets a caller signal many processes before waiting for any (FunctionPool.close);
    ``stop`` afterwards must not signal again: a second SIGTERM could cut a graceful shutdown short."""
    procs = []
    for i in range(2):
        log, flag = tmp_path / f"terms-{i}", tmp_path / f"up-{i}"
        procs.append((Process(f"p{i}", [sys.executable, "-c", _COUNTS_TERMS, log, flag], tmp_path / f"p{i}.log"),
                      log, flag))
    for p, _, flag in procs:
        p.wait_ready(flag.exists, timeout=60)
    for p, _, _ in procs:
        p.terminate()
    # Both get their SIGTERM before either is waited for: each writes its log on its own.
    deadline = time.monotonic() + 60   # waits on the logs; generous for a busy machine
    while not all(log.exists() for _, log, _ in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(log.exists() for _, log, _ in procs)
    for p, log, _ in procs:
        assert p.stop() == 0
        assert log.read_text() == "TERM\n"
    assert not any(p.alive() for p, _, _ in procs)


def test_process_not_ready_in_time(tmp_path):
    p = Process("slow", [sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "slow.log")
    try:
        with pytest.raises(ComponentError, match="slow was not ready within 0 s"):
            p.wait_ready(lambda: False, timeout=0.3)
    finally:
        p.stop()
