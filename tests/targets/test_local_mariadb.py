"""LocalMariaDB against the real MariaDB programs: install, start in its own session, the accounts
and databases over TCP and the socket, TLS with the private CA, reuse by a second object, stop."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from dbscale.targets.local.mariadb import (
    PASSWORD,
    PASSWORD_USER,
    LocalMariaDB,
    MariaDBBinaries,
    find_mariadb_binaries,
)
from tests.conftest import shared_directory, skip_or_fail


@pytest.fixture(scope="module")
def binaries() -> MariaDBBinaries:
    found = find_mariadb_binaries()
    if found is None:
        skip_or_fail("no MariaDB server programs (apt-get install mariadb-server)")
        raise AssertionError("unreachable")
    return found


@pytest.fixture(scope="module")
def server(binaries: MariaDBBinaries) -> Iterator[LocalMariaDB]:
    with shared_directory() as base:
        db = LocalMariaDB(base / "mariadb", binaries=binaries)
        with db:
            yield db
        db.destroy()


def client(binaries: MariaDBBinaries, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binaries.client), "--no-defaults", "--batch", "--skip-column-names", *args],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip


def test_accounts_databases_and_settings(server: LocalMariaDB, binaries: MariaDBBinaries) -> None:
    assert server.status() == "running"
    tcp = ["-h", "127.0.0.1", "-P", str(server.port)]
    done = client(binaries, *tcp, "-u", "root", "-e", "SELECT @@max_prepared_stmt_count")
    assert done.stdout.strip() == "100000", done.stderr
    done = client(binaries, *tcp, "-u", PASSWORD_USER, f"-p{PASSWORD}", "-e", "SHOW DATABASES")
    assert {"sbtest", "dbscale_test"} <= set(done.stdout.split()), done.stderr
    assert client(binaries, *tcp, "-u", PASSWORD_USER, "-pwrong", "-e", "SELECT 1").returncode
    assert server.sql("SELECT count(*) FROM mysql.user WHERE user = ''") == "0"
    assert server.sql("SELECT @@bind_address") == "127.0.0.1"
    assert server.url.startswith("mysql://root@127.0.0.1:")
    assert f"socket={server.socket_path}" in server.socket_url


def test_tls_verifies_with_the_private_ca(server: LocalMariaDB, binaries: MariaDBBinaries) -> None:
    done = client(
        binaries, "-h", "127.0.0.1", "-P", str(server.port), "-u", "root", "--ssl",
        f"--ssl-ca={server.ca_file}", "--ssl-verify-server-cert", "-e",
        "SHOW STATUS LIKE 'Ssl_version'",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "TLS" in done.stdout


def test_runs_in_its_own_session_and_is_reused(server: LocalMariaDB) -> None:
    pid = server.running_pid()
    assert pid is not None and os.getsid(pid) != os.getsid(0)
    again = LocalMariaDB(server.base_dir)
    assert again.start() is False  # already running: reused, and not stopped by `again`
    assert again.port == server.port
    again.__exit__(None, None, None)
    assert server.running_pid() == pid


def test_stop_and_restart_keep_the_data(server: LocalMariaDB) -> None:
    server.sql("CREATE TABLE sbtest.kept (id int); INSERT INTO sbtest.kept VALUES (7)")
    server.stop()
    assert server.status() == "stopped"
    assert "Shutdown complete" in server.log_tail()
    assert server.start() is True
    assert server.sql("SELECT id FROM sbtest.kept") == "7"
