"""Security: who may call, what a member template may ask for, and where secrets go.

- mTLS: only a client certificate from the trusted CA, valid now, gets an answer.
- Admission rejects privileged containers, host namespaces and hostPath in a
  member template, naming the field; and compose-model-replica never puts
  them in a composed pod, whatever its (composed-only) spec carries.
- Secrets are referenced, never copied: with a Secret's value present in the
  request (as a required resource and as function credentials) the value
  appears nowhere in the response nor in the server's logs.
"""
from __future__ import annotations

import base64
import copy
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from google.protobuf import text_format
from modelplane import paths
from modelplane.validate import Validator

from tests import support
from tests.reliability import certs, fleet
from tests.reliability.common import require_function
from tests.reliability.procs import Server

CLASS = "compose-inference-class"


# ----- mTLS ----------------------------------------------------------------------
@dataclass(frozen=True)
class Client:
    name: str
    accepted: bool


CLIENTS = [Client("trusted", True), Client("expired", False), Client("not-yet-valid", False),
           Client("wrong-ca", False), Client("self-signed", False)]


@pytest.fixture(scope="module")
def mtls_server(tmp_path_factory):
    require_function(CLASS)
    directory = tmp_path_factory.mktemp("certs")
    pairs = certs.make(directory)
    with Server(CLASS, "--tls-certs-dir", str(directory)) as server:
        yield server, pairs


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_mtls_answers_only_currently_valid_clients_of_the_trusted_ca(mtls_server, client):
    server, pairs = mtls_server
    cert, key = pairs[client.name]
    creds = grpc.ssl_channel_credentials(root_certificates=pairs["ca"][0], private_key=key, certificate_chain=cert)
    req = support.request(fleet.baseline(CLASS))
    if client.accepted:
        rsp = support.call(server.address, req, credentials=creds, server_name="localhost", timeout=10)
        assert support.fatal(rsp) is None
    else:
        with pytest.raises(grpc.RpcError) as err:
            support.call(server.address, req, credentials=creds, server_name="localhost", timeout=3)
        assert err.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    assert server.alive()


# ----- privileged templates --------------------------------------------------------
@dataclass(frozen=True)
class Privilege:
    name: str
    where: tuple          # path under the member template
    value: Any
    field: str            # what the admission finding must name


PRIVILEGES = [
    Privilege("privileged-container", ("spec", "containers", 0, "securityContext"), {"privileged": True},
              "template.spec.containers[0].securityContext"),
    Privilege("pod-security-context", ("spec", "securityContext"), {"runAsUser": 0}, "template.spec.securityContext"),
    Privilege("host-network", ("spec", "hostNetwork"), True, "template.spec.hostNetwork"),
    Privilege("host-pid", ("spec", "hostPID"), True, "template.spec.hostPID"),
    Privilege("host-ipc", ("spec", "hostIPC"), True, "template.spec.hostIPC"),
    # Volumes are secret volumes only: a hostPath is an unknown field (and the volume lacks its secret).
    Privilege("host-path-volume", ("spec", "volumes"), [{"name": "root", "hostPath": {"path": "/"}}],
              "template.spec.volumes[0].hostPath"),
    Privilege("added-capabilities", ("spec", "containers", 0, "securityContext"),
              {"capabilities": {"add": ["SYS_ADMIN"]}}, "template.spec.containers[0].securityContext"),
]


def put(obj: Any, where: tuple, value: Any) -> None:
    for part in where[:-1]:
        obj = obj[part]
    obj[where[-1]] = value


@pytest.fixture(scope="module")
def validator():
    return Validator.from_paths([paths.APIS])


@pytest.mark.parametrize("p", PRIVILEGES, ids=lambda p: p.name)
def test_admission_rejects_privileged_member_templates_naming_the_field(validator, p):
    xr = fleet.baseline("compose-model-deployment")
    assert validator.validate_document(xr) == []
    put(xr["spec"]["engines"][0]["members"][0]["template"], p.where, copy.deepcopy(p.value))
    findings = validator.validate_document(xr)
    assert any(f.path.endswith(p.field) for f in findings), [(f.path, f.message) for f in findings]


FORBIDDEN_TRUE = {"privileged", "hostNetwork", "hostPID", "hostIPC", "allowPrivilegeEscalation"}


def privileges_in(value: Any, path: str = "") -> list[str]:
    """Every privileged setting anywhere inside ``value`` (paths, for messages)."""
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            here = f"{path}.{k}"
            if (k in FORBIDDEN_TRUE and v is True) or k == "hostPath" or (k == "add" and v):
                found.append(here)
            found += privileges_in(v, here)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += privileges_in(v, f"{path}[{i}]")
    return found


@pytest.mark.parametrize("p", PRIVILEGES, ids=lambda p: p.name)
def test_composed_pods_never_carry_privileges_even_when_a_replica_asks(p):
    function = "compose-model-replica"
    require_function(function)
    xr = fleet.replica()
    put(xr["spec"]["engines"][0]["members"][0]["template"], p.where, copy.deepcopy(p.value))
    rsp = support.run(function, support.request(xr))
    message = support.fatal(rsp)
    if message:  # refusing is fine, if it says where
        assert not message.startswith("internal error"), message
        assert "spec.engines[0].members[0].template" in message, message
        return
    found = privileges_in(support.desired(rsp))
    assert found == [], f"{p.name} reached a composed object: {found}"


# ----- secrets -----------------------------------------------------------------------
SECRET_FORMS = (fleet.SECRET_VALUE, base64.b64encode(fleet.SECRET_VALUE.encode()).decode())


@dataclass(frozen=True)
class Holder:
    function: str


HOLDERS = [Holder("compose-model-cache"), Holder("compose-model-endpoint")]


def secret_request(function: str):
    """A healthy request that also carries the Secret as input and as credentials."""
    xr = fleet.baseline(function)
    rsp = fleet.converge(support.run, function, xr)
    required = fleet.answer(rsp.requirements, fleet.catalog())
    required["secret"] = [i for i in fleet.catalog() if i["kind"] == "Secret"]
    req = support.request(xr, required=required)
    creds = req.credentials["huggingface"].credential_data.data
    creds["token"] = fleet.SECRET_VALUE.encode()
    creds["apiKey"] = fleet.SECRET_VALUE.encode()
    return req


def leaks(text: str) -> list[str]:
    return [form for form in SECRET_FORMS if form in text]


@pytest.mark.parametrize("holder", HOLDERS, ids=lambda h: h.function)
def test_secret_values_never_appear_in_responses_or_logs(holder):
    require_function(holder.function)
    req = secret_request(holder.function)
    # Sanity: the request does carry the value, so a copy would be caught.
    assert leaks(text_format.MessageToString(req))
    with Server(holder.function, "--insecure", "--debug") as server:
        rsp = support.call(server.address, req)
        logs = server.logs()
    assert support.fatal(rsp) is None, support.fatal(rsp)
    assert leaks(text_format.MessageToString(rsp)) == [], "secret value in the response"
    assert leaks(logs) == [], "secret value in the server logs"
    inproc = support.run(holder.function, req)
    assert leaks(text_format.MessageToString(inproc)) == []
