"""A private certificate authority and a server certificate for `localhost` / 127.0.0.1, made with
the `openssl` command so private servers can offer TLS that clients verify (`verify-full`).
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dbscale.errors import LocalServerError

VALID_DAYS = 3650
_SERVER_EXTENSIONS = """\
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
"""


@dataclass(frozen=True)
class TlsFiles:
    ca_cert: Path
    ca_key: Path
    server_cert: Path
    server_key: Path

    @classmethod
    def in_dir(cls, directory: Path) -> TlsFiles:
        return cls(
            ca_cert=directory / "ca.crt",
            ca_key=directory / "ca.key",
            server_cert=directory / "server.crt",
            server_key=directory / "server.key",
        )

    def exist(self) -> bool:
        return all(p.is_file() for p in (self.ca_cert, self.server_cert, self.server_key))


def make_certificates(directory: Path) -> TlsFiles:
    """Creates (once) a CA and a server certificate signed by it in `directory`. EC P-256 keys
    keep it fast; the extensions are what strict verifiers (rustls/webpki) insist on."""
    files = TlsFiles.in_dir(directory)
    if files.exist():
        return files
    openssl = shutil.which("openssl")
    if openssl is None:
        raise LocalServerError(
            "the openssl command is needed to make the private server's TLS certificates",
            "install it (e.g. `apt-get install openssl`)",
        )
    directory.mkdir(parents=True, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl(
        openssl,
        "req", "-x509", *ec, "-keyout", str(files.ca_key), "-out", str(files.ca_cert),
        "-days", str(VALID_DAYS), "-subj", "/CN=dbscale private CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    csr = directory / "server.csr"
    ext = directory / "server.ext"
    ext.write_text(_SERVER_EXTENSIONS)
    _openssl(
        openssl,
        "req", "-new", *ec, "-keyout", str(files.server_key), "-out", str(csr),
        "-subj", "/CN=localhost",
    )  # fmt: skip
    _openssl(
        openssl,
        "x509", "-req", "-in", str(csr), "-CA", str(files.ca_cert), "-CAkey", str(files.ca_key),
        "-set_serial", str(secrets.randbits(63)), "-days", str(VALID_DAYS),
        "-extfile", str(ext), "-out", str(files.server_cert),
    )  # fmt: skip
    csr.unlink()
    ext.unlink()
    files.ca_key.chmod(0o600)
    files.server_key.chmod(0o600)
    files.ca_cert.chmod(0o644)
    files.server_cert.chmod(0o644)
    return files


def _openssl(openssl: str, *args: str) -> None:
    done = subprocess.run([openssl, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise LocalServerError(
            f"openssl {args[0]} failed: {detail[-1] if detail else done.returncode}",
            "check that the openssl command works (`openssl version`)",
        )
