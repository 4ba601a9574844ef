"""TLS for the remote door's tests: a test CA and a server certificate it signed, made with openssl
(shared/notes/network-tests.md's recipe), and the session's one set of them."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Certificates:
    ca: Path
    cert: Path
    key: Path


def make_certificates(folder: Path, addresses: tuple[str, ...] = ("127.0.0.1",)) -> Certificates:
    """A test CA and a server certificate it signed, for ``localhost`` and ``addresses``."""
    folder.mkdir(parents=True, exist_ok=True)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)

    openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
        "-subj", "/CN=pyramid-test-ca", "-keyout", "ca.key", "-out", "ca.pem",
    )  # fmt: skip
    openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=localhost",
        "-keyout", "srv.key", "-out", "srv.csr",
    )  # fmt: skip
    names = ",".join(["DNS:localhost", *(f"IP:{address}" for address in addresses)])
    (folder / "ext.cnf").write_text(f"subjectAltName={names}\n")
    openssl(
        "x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-extfile", "ext.cnf", "-out", "srv.pem",
    )  # fmt: skip
    return Certificates(folder / "ca.pem", folder / "srv.pem", folder / "srv.key")


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    """A CA and the certificate it signed for ``localhost`` and ``127.0.0.1``: made once a session (each
    worker process its own), as the tests only read them."""
    return make_certificates(tmp_path_factory.mktemp("tls"))
