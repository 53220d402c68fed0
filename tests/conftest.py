"""Shared fixtures. Tests hit real servers: the private test PostgreSQL that `make test` starts
(described by DBSCALE_TEST_PG_* variables), or servers a test starts itself. Without them a test
is skipped, unless DBSCALE_REQUIRE_SERVERS=1 (set in CI), where a missing server is a failure.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]


def servers_required() -> bool:
    return os.environ.get("DBSCALE_REQUIRE_SERVERS") == "1"


def skip_or_fail(reason: str) -> None:
    """Skips, or fails when servers are required (CI)."""
    if servers_required():
        pytest.fail(f"{reason} (DBSCALE_REQUIRE_SERVERS=1)", pytrace=False)
    pytest.skip(reason)


@dataclass(frozen=True)
class PgTestServer:
    """The session's test server, as the environment describes it."""

    url: str
    socket_dir: Path
    port: int
    ca_file: Path
    scram_url: str
    bin_dir: Path

    def url_for(self, dbname: str, *, user: str = "postgres", password: str | None = None) -> str:
        auth = f"{user}:{password}" if password else user
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{dbname}"

    def tool(self, name: str) -> str:
        path = self.bin_dir / name
        return str(path) if path.is_file() else name

    def psql(self, sql: str, dbname: str = "postgres") -> str:
        done = subprocess.run(
            [self.tool("psql"), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1",
             "-h", str(self.socket_dir), "-p", str(self.port), "-U", "postgres", "-d", dbname,
             "-c", sql],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def fresh_database(self, name: str) -> str:
        """Drops and creates database `name`; returns its admin URL."""
        self.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.psql(f'CREATE DATABASE "{name}"')
        return self.url_for(name)


@pytest.fixture(scope="session")
def test_pg() -> PgTestServer:
    env = os.environ
    if not env.get("DBSCALE_TEST_PG_URL"):
        skip_or_fail(
            "no test PostgreSQL: run `make test`, or `scripts/test-servers.sh start` and source "
            ".cache/test-servers.env"
        )
    pg = PgTestServer(
        url=env["DBSCALE_TEST_PG_URL"],
        socket_dir=Path(env["DBSCALE_TEST_PG_SOCKET_DIR"]),
        port=int(env["DBSCALE_TEST_PG_PORT"]),
        ca_file=Path(env["DBSCALE_TEST_PG_CA"]),
        scram_url=env["DBSCALE_TEST_PG_SCRAM_URL"],
        bin_dir=Path(env.get("DBSCALE_TEST_PG_BIN", "/usr/lib/postgresql/15/bin")),
    )
    ready = subprocess.run(
        [pg.tool("pg_isready"), "-h", str(pg.socket_dir), "-p", str(pg.port)],
        capture_output=True, check=False,
    )  # fmt: skip
    if ready.returncode != 0:
        skip_or_fail(f"the test PostgreSQL at {pg.url} is not accepting connections")
    return pg


@pytest.fixture(scope="session")
def core() -> ModuleType:
    """The built native module; skipped (failed in CI) when it is not built."""
    from dbscale.core import load_core
    from dbscale.errors import NativeModuleMissingError

    try:
        return load_core()
    except NativeModuleMissingError as exc:
        skip_or_fail(f"{exc.message}; run `make build`")
        raise


@contextmanager
def shared_directory() -> Iterator[Path]:
    """A temporary directory other OS users can enter: PostgreSQL runs as `postgres` when the
    tests run as root, and pytest's own tmp_path is private to root."""
    path = Path(tempfile.mkdtemp(prefix="dbscale-test-", dir="/var/tmp"))
    path.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    with shared_directory() as path:
        yield path
