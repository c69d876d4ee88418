"""Certificates for programs on loopback: a CA, the leaves it issues, signing keys.

    CA("lab-ca")                   a new CA (the API servers', the lab's)
    CA.from_pem(cert, key)         a CA made elsewhere (Crossplane's ``crossplane-root-ca``)
    ca.issue(cn, dns=, ips=, ...)  a leaf -> ``Pair`` (PEM certificate and key)
    ca.loopback_tls(cn)            a leaf for a server on 127.0.0.1, as a TLS Secret's data
    signing_key()                  a bare key pair (service-account tokens)
    write_files(dir, data)         PEM files, private keys 0600

New keys are ECDSA P-256 (fast to generate on a busy machine; Kubernetes,
etcd, Go's and Python's gRPC accept it for serving, client and
service-account signing keys); a loaded CA signs with whatever key it has.
Every certificate's validity window starts a day back so a skewed clock never
sees it "not yet valid".

Needs the ``cryptography`` package (imported on first use).
"""
from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_VALID_DAYS = 365
# What a client dialling a server on this machine checks: Crossplane's gRPC client dials
# 127.0.0.1:<port>, an API server calls a webhook at https://127.0.0.1:<port>/...
LOOPBACK_DNS = ("localhost",)
LOOPBACK_IPS = ("127.0.0.1",)


@dataclass(frozen=True)
class Pair:
    """A PEM certificate and its PEM private key."""

    cert: bytes
    key: bytes

    def write(self, directory: Path, stem: str) -> tuple[Path, Path]:
        """Write ``<stem>.crt`` and ``<stem>.key`` (0600); returns both paths."""
        write_files(directory, {f"{stem}.crt": self.cert, f"{stem}.key": self.key})
        return directory / f"{stem}.crt", directory / f"{stem}.key"


def write_files(directory: Path, data: Mapping[str, bytes]) -> Path:
    """Each entry as a file named by its key (a TLS Secret's keys: what ``--tls-certs-dir``
    and ``TLS_SERVER_CERTS_DIR`` read); ``*.key`` files 0600. Returns ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, value in data.items():
        path = directory / name
        if name.endswith(".key"):
            path.touch(mode=0o600)  # before the key is in it
        path.write_bytes(value)
    return directory


def _crypto():
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError as err:  # pragma: no cover - depends on the install
        raise RuntimeError("local control planes need the 'cryptography' package: pip install cryptography") from err
    return x509, hashes, serialization, ec, ExtendedKeyUsageOID, NameOID


def _pem_key(key) -> bytes:
    _, _, serialization, *_ = _crypto()
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def signing_key() -> Pair:
    """A bare key pair (cert = the PEM public key): the service-account token signer."""
    _, _, serialization, ec, *_ = _crypto()
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return Pair(public, _pem_key(key))


class CA:
    """A self-signed certificate authority that issues leaf certificates."""

    def __init__(self, common_name: str = "modelplane-local-ca") -> None:
        x509, hashes, serialization, ec, _, NameOID = _crypto()
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        # The OS clock, not modelplane.clock: OpenSSL checks validity against the OS clock.
        now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=1)
        cert = (
            x509.CertificateBuilder()
            .subject_name(self._name)
            .issuer_name(self._name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=_VALID_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.pair = Pair(cert.public_bytes(serialization.Encoding.PEM), _pem_key(self._key))

    @classmethod
    def from_pem(cls, cert: bytes, key: bytes) -> CA:
        """A CA someone else made, from its PEM certificate and key (any key type ``cryptography``
        signs with: Crossplane's is RSA). ``cert`` is kept as given: it is what clients trust."""
        x509, _, serialization, *_ = _crypto()
        ca = cls.__new__(cls)
        ca._key = serialization.load_pem_private_key(key, password=None)
        ca._name = x509.load_pem_x509_certificate(cert).subject
        ca.pair = Pair(cert, key)
        return ca

    @property
    def cert(self) -> bytes:
        return self.pair.cert

    def issue(self, common_name: str, *, organizations: tuple[str, ...] = (), dns: tuple[str, ...] = (),
              ips: tuple[str, ...] = (), server: bool = False, client: bool = False) -> Pair:
        """A leaf certificate for ``common_name`` (O = ``organizations``: Kubernetes groups)."""
        x509, hashes, serialization, ec, EKU, NameOID = _crypto()
        key = ec.generate_private_key(ec.SECP256R1())
        subject = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
        subject.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
        # The OS clock, not modelplane.clock: OpenSSL checks validity against the OS clock.
        now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=1)
        usages = ([EKU.SERVER_AUTH] if server else []) + ([EKU.CLIENT_AUTH] if client else [])
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name(subject))
            .issuer_name(self._name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=_VALID_DAYS))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        )
        if usages:
            builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        names = [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        return Pair(cert.public_bytes(serialization.Encoding.PEM), _pem_key(key))

    def loopback_tls(self, common_name: str) -> dict[str, bytes]:
        """A server-and-client leaf naming loopback (``LOOPBACK_DNS``, ``LOOPBACK_IPS``) as the three
        keys of a TLS Secret, the shape Crossplane gives every package runtime: ``tls.crt``,
        ``tls.key``, ``ca.crt``."""
        pair = self.issue(common_name, dns=LOOPBACK_DNS, ips=LOOPBACK_IPS, server=True, client=True)
        return {"tls.crt": pair.cert, "tls.key": pair.key, "ca.crt": self.cert}
