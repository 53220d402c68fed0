"""TLS as libpq verifies it: a self-signed server certificate marked as a CA (`CA:TRUE`), given
as the root, is accepted for verify-ca and verify-full as psql accepts it; a certificate the
root did not sign is refused with a sentence and a hint, not rustls's debug text."""

from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import closing
from pathlib import Path

import pytest

from dbscale import core
from dbscale.core.config import TargetConfig, WorkloadConfig, make_run_config
from dbscale.errors import DbscaleError
from dbscale.targets.local.binaries import find_postgres_binaries
from dbscale.targets.local.postgres import LocalPostgres
from tests.conftest import skip_or_fail


def _self_signed_ca(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "self.crt", directory / "self.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "30", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-addext", "basicConstraints=critical,CA:TRUE"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def _select_one(url: str) -> list[list[str | None]]:
    config = make_run_config(target=TargetConfig(url=url), workload=WorkloadConfig(name="tpcb"))
    with closing(core.Session(config)) as session:
        return session.query("SELECT 1")


@pytest.fixture(scope="module")
def self_signed_server(tmp_path_factory: pytest.TempPathFactory) -> tuple[LocalPostgres, Path]:
    try:
        find_postgres_binaries()
    except Exception as exc:
        skip_or_fail(f"no PostgreSQL server programs: {exc}")
    base = tmp_path_factory.mktemp("selfsigned")
    server_dir = Path("/var/tmp") / f"dbscale-test-tls-{os.getpid()}"  # the server's OS user
    server = LocalPostgres(server_dir)  # must reach it, as root runs it as another user
    try:
        with server:
            cert, key = _self_signed_ca(base)
            server.tls.server_cert.write_bytes(cert.read_bytes())
            server.tls.server_key.write_bytes(key.read_bytes())
            server._chown(server.tls.server_cert, server.tls.server_key)
            server.psql("SELECT pg_reload_conf()")
            yield server, cert
    finally:
        shutil.rmtree(server_dir, ignore_errors=True)


@pytest.mark.parametrize("mode", ["verify-ca", "verify-full"])
def test_a_self_signed_ca_certificate_given_as_root_is_trusted(
    self_signed_server: tuple[LocalPostgres, Path], mode: str
) -> None:
    server, cert = self_signed_server
    url = f"{server.url}?sslmode={mode}&sslrootcert={cert}"
    assert _select_one(url) == [["1"]]


def test_a_certificate_the_root_did_not_sign_is_refused_in_words(
    self_signed_server: tuple[LocalPostgres, Path], tmp_path: Path
) -> None:
    server, _ = self_signed_server
    other, _ = _self_signed_ca(tmp_path)
    with pytest.raises(DbscaleError) as refused:
        _select_one(f"{server.url}?sslmode=verify-full&sslrootcert={other}")
    message = refused.value.message
    assert "not signed by a root you trust" in message, message
    assert "Other(" not in message and "OtherError" not in message
    assert "sslrootcert" in refused.value.hint
