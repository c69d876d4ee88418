"""Certificates for mTLS tests: a trusted CA and clients that must be turned away.

Like tests.support.make_certs, plus the clients that go wrong in real life:
an expired certificate and one not yet valid (both from the trusted CA), one
from another CA, and a self-signed one. Validity windows are relative to the
real clock, because the server checks them against it.
"""
from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

DAY = datetime.timedelta(days=1)


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(k) -> bytes:
    return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                           serialization.NoEncryption())


def _pem(c) -> bytes:
    return c.public_bytes(serialization.Encoding.PEM)


def _cert(key, cn: str, *, issuer=None, issuer_key=None, ca=False, san=None, start=None, end=None):
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer.subject if issuer else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start or now - DAY)
        .not_valid_after(end or now + 365 * DAY)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    return builder.sign(issuer_key or key, hashes.SHA256())


def make(directory: Path) -> dict[str, tuple[bytes, bytes]]:
    """Write the server's tls.crt/tls.key/ca.crt; return client pairs by name, plus the CA as ("ca", ...)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = _key()
    ca = _cert(ca_key, "modelplane-test-ca", ca=True)
    srv_key = _key()
    srv = _cert(srv_key, "localhost", issuer=ca, issuer_key=ca_key,
                san=[x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    other_key = _key()
    other = _cert(other_key, "another-ca", ca=True)

    def client(cn, **kw):
        k = _key()
        return _pem(_cert(k, cn, **kw)), _pem_key(k)

    out = {
        "ca": (_pem(ca), b""),
        "trusted": client("crossplane", issuer=ca, issuer_key=ca_key),
        "expired": client("crossplane", issuer=ca, issuer_key=ca_key, start=now - 30 * DAY, end=now - DAY),
        "not-yet-valid": client("crossplane", issuer=ca, issuer_key=ca_key, start=now + DAY, end=now + 30 * DAY),
        "wrong-ca": client("crossplane", issuer=other, issuer_key=other_key),
        "self-signed": client("crossplane"),
    }
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "ca.crt").write_bytes(_pem(ca))
    (directory / "tls.crt").write_bytes(_pem(srv))
    (directory / "tls.key").write_bytes(_pem_key(srv_key))
    return out
