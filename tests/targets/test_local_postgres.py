"""LocalPostgres against the real PostgreSQL programs: init, start, connect over TCP and the
socket, TLS (require and verify-full), scram-sha-256, reuse, stop."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbscale.errors import LocalServerError
from dbscale.targets.local.binaries import PostgresBinaries, find_postgres_binaries
from dbscale.targets.local.postgres import SCRAM_PASSWORD, LocalPostgres
from dbscale.targets.local.processes import OWNER_FILE
from tests.conftest import shared_directory, skip_or_fail


@pytest.fixture(scope="module")
def binaries() -> PostgresBinaries:
    try:
        return find_postgres_binaries()
    except LocalServerError as exc:
        skip_or_fail(f"no PostgreSQL server programs: {exc.message}")
        raise


@pytest.fixture(scope="module")
def server(binaries: PostgresBinaries) -> Iterator[LocalPostgres]:
    with shared_directory() as base:
        pg = LocalPostgres(base / "pg", binaries=binaries, settings={"fsync": False})
        with pg:
            yield pg
        pg.destroy()


def psql(
    binaries: PostgresBinaries, conninfo: str, sql: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return subprocess.run(
        [str(binaries.tool("psql")), "-X", "-A", "-t", conninfo, "-c", sql],
        capture_output=True, text=True, env={**clean, **(env or {})}, check=False,
    )  # fmt: skip


def test_starts_and_accepts_tcp_and_socket(
    server: LocalPostgres, binaries: PostgresBinaries
) -> None:
    assert server.status() == "running"
    assert server.url.startswith("postgresql://postgres@127.0.0.1:")
    ready = subprocess.run(
        [str(binaries.bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(server.port)],
        capture_output=True, check=False,
    )  # fmt: skip
    assert ready.returncode == 0
    assert psql(binaries, server.url, "select 1").stdout.strip() == "1"
    assert psql(binaries, server.socket_url, "select 2").stdout.strip() == "2"
    assert server.psql("show max_connections") == "300"
    assert server.psql("show shared_buffers") == "256MB"
    assert server.psql("show fsync") == "off"  # the settings dict overrides defaults
    assert server.psql("show listen_addresses") == "127.0.0.1"


def test_postmaster_does_not_share_our_session(server: LocalPostgres) -> None:
    """Ctrl-C at the terminal goes to dbscale (which cancels cleanly), not to the postmaster."""
    pid = int((server.data_dir / "postmaster.pid").read_text().splitlines()[0])
    assert os.getsid(pid) != os.getsid(0)


def test_tls_require_and_verify_full(server: LocalPostgres, binaries: PostgresBinaries) -> None:
    sql = "select ssl from pg_stat_ssl where pid = pg_backend_pid()"
    assert psql(binaries, f"{server.url}?sslmode=require", sql).stdout.strip() == "t"
    verified = psql(binaries, f"{server.url}?sslmode=verify-full&sslrootcert={server.ca_file}", sql)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.strip() == "t"
    assert psql(binaries, f"{server.url}?sslmode=disable", sql).stdout.strip() == "f"


def test_scram_user(server: LocalPostgres, binaries: PostgresBinaries) -> None:
    ok = psql(binaries, server.password_url, "select current_user")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "dbscale_scram"
    method = server.psql("select rolpassword like 'SCRAM-SHA-256$%' from pg_authid "
                         "where rolname = 'dbscale_scram'")  # fmt: skip
    assert method == "t"
    without = server.password_url.replace(f":{SCRAM_PASSWORD}", "")
    assert psql(binaries, without, "select 1", {"PGPASSWORD": SCRAM_PASSWORD}).returncode == 0
    wrong = psql(binaries, server.password_url.replace(SCRAM_PASSWORD, "nope"), "select 1")
    assert wrong.returncode != 0
    assert "password authentication failed" in wrong.stderr


def test_reuse_keeps_data_and_only_the_starter_stops(
    shared_tmp: Path, binaries: PostgresBinaries
) -> None:
    base = shared_tmp / "reuse"
    first = LocalPostgres(base, binaries=binaries)
    with first:
        first.psql("create table kept (x int); insert into kept values (42)")
        # A second user of the same directory finds it running and leaves it running.
        with LocalPostgres(base, binaries=binaries) as second:
            assert second.port == first.port
        assert first.status() == "running"
    assert first.status() == "stopped"
    with LocalPostgres(base, binaries=binaries) as again:  # no new initdb: data is still there
        assert again.psql("select x from kept") == "42"
    assert again.status() == "stopped"
    assert again.log_file.is_file()
    again.destroy()
    assert again.status() == "uninitialized"


def test_the_starter_leaving_first_leaves_it_to_the_last_user(
    shared_tmp: Path, binaries: PostgresBinaries
) -> None:
    """Two dbscale commands on one private server (issue 42): the one that started it ends
    first; the server keeps serving the other, is not taken for an orphan by a third, and the
    last one out stops it."""
    base = shared_tmp / "handover"
    first = LocalPostgres(base, binaries=binaries).__enter__()
    second = LocalPostgres(base, binaries=binaries).__enter__()
    assert second.shared and not first.shared and second.port == first.port
    first.__exit__(None, None, None)
    assert second.status() == "running"
    assert second.psql("select 7") == "7"
    # Its starter is gone now (as a killed process would be): still not an orphan, in use.
    (first.run_dir / OWNER_FILE).write_text("999999999 0\n")
    with LocalPostgres(base, binaries=binaries) as third:
        assert third.reaped_from is None and third.shared and third.port == first.port
    assert second.status() == "running"
    second.__exit__(None, None, None)
    assert second.status() == "stopped"
    second.destroy()


def test_failed_start_names_the_log(shared_tmp: Path, binaries: PostgresBinaries) -> None:
    pg = LocalPostgres(shared_tmp / "bad", binaries=binaries, settings={"shared_buffers": "lots"})
    with pytest.raises(LocalServerError) as info:
        pg.start()
    assert str(pg.log_file) in info.value.hint
    assert pg.status() == "stopped"


def test_a_private_pgbouncer_in_front(server: LocalPostgres, binaries: PostgresBinaries) -> None:
    """Session pooling to the server, TLS with its certificate; one left running by a killed
    dbscale is stopped before the next starts in the same directory."""
    from dbscale.targets.local.pgbouncer import LocalPgBouncer, find_pgbouncer

    try:
        find_pgbouncer()
    except LocalServerError as exc:
        skip_or_fail(exc.message)
    orphan = LocalPgBouncer(server, server.base_dir / "pgbouncer")
    facts = orphan.start()
    assert facts.pool_mode == "session" and facts.port == orphan.port
    done = psql(binaries, orphan.url + "?sslmode=require", "SELECT ssl FROM pg_stat_ssl LIMIT 0")
    assert done.returncode == 0, done.stderr  # TLS to the pooler
    done = psql(binaries, orphan.url, "SELECT current_setting('port')")
    assert done.stdout.strip() == str(server.port)  # the server behind it answers
    old = orphan._process
    assert old is not None
    orphan._process = None  # as if dbscale were killed: nobody stops it
    pooler = LocalPgBouncer(server, server.base_dir / "pgbouncer")
    pooler.start()
    try:
        assert old.wait(5) is not None  # the orphan was stopped
        assert psql(binaries, pooler.url, "SELECT 1").stdout.strip() == "1"
    finally:
        pooler.stop()
    assert pooler._process is None
