"""Certificates signed by Crossplane's own CA (the ``crossplane-root-ca`` Secret).

``crossplane core init`` creates that CA and Crossplane's client certificate.
A package runtime then gives every function (and provider webhook) a server
certificate from the same CA, in a Secret with ``tls.crt``, ``tls.key`` and
``ca.crt``. The Deployment runtime names the Service's DNS names; the lab's
runtime serves on loopback, so its certificates name ``127.0.0.1`` and
``localhost`` — what Crossplane's gRPC client checks when it dials
``127.0.0.1:<port>``.
"""
from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALID_DAYS = 365
LOOPBACK_DNS = ("localhost",)
LOOPBACK_IPS = ("127.0.0.1",)


def issue(ca_cert_pem: bytes, ca_key_pem: bytes, common_name: str, *, dns: tuple[str, ...] = LOOPBACK_DNS,
          ips: tuple[str, ...] = LOOPBACK_IPS) -> dict[str, bytes]:
    """A server-and-client leaf for ``common_name``: the three keys of a Crossplane TLS Secret."""
    ca_cert = x509.load_pem_x509_certificate(ca_cert_pem)
    ca_key = serialization.load_pem_private_key(ca_key_pem, password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=1)
    names = [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=_VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return {
        "tls.crt": cert.public_bytes(serialization.Encoding.PEM),
        "tls.key": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()),
        "ca.crt": ca_cert_pem,
    }


def write_dir(directory: Path, data: dict[str, bytes]) -> Path:
    """The Secret's keys as files (``--tls-certs-dir`` / ``TLS_SERVER_CERTS_DIR``); keys 0600."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, value in data.items():
        path = directory / name
        if name.endswith(".key"):
            path.touch(mode=0o600)
        path.write_bytes(value)
    return directory
