"""The session's test MariaDB, as `scripts/test-servers.sh` describes it (DBSCALE_TEST_MYSQL_*),
and the real sysbench: helpers for the sysbench tests. Missing pieces skip, or fail when
DBSCALE_REQUIRE_SERVERS=1 (CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from tests.conftest import skip_or_fail


@dataclass(frozen=True)
class MariaDBTestServer:
    url: str  # mysql://root@127.0.0.1:PORT/dbscale_test (no password)
    port: int
    socket: Path
    ca_file: Path

    def url_for(self, dbname: str, *, user: str = "root", password: str | None = None) -> str:
        auth = f"{user}:{password}" if password else user
        return f"mysql://{auth}@127.0.0.1:{self.port}/{dbname}"

    def sql(self, sql: str) -> str:
        client = shutil.which("mariadb") or shutil.which("mysql") or "mariadb"
        done = subprocess.run(
            [client, "--no-defaults", "-h", "127.0.0.1", "-P", str(self.port), "-u", "root",
             "--batch", "--skip-column-names", "-e", sql],
            capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def fresh_database(self, name: str) -> str:
        self.sql(f"DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}")
        return self.url_for(name)


def mariadb_from_env() -> MariaDBTestServer:
    env = os.environ
    url = env.get("DBSCALE_TEST_MYSQL_URL")
    if not url:
        skip_or_fail(
            "no test MariaDB: run `make test`, or `scripts/test-servers.sh start` (with "
            "mariadb-server installed) and source .cache/test-servers.env"
        )
        raise AssertionError("unreachable")
    port = urlsplit(url).port or 3306
    server = MariaDBTestServer(
        url=url,
        port=port,
        socket=Path(env.get("DBSCALE_TEST_MYSQL_SOCKET", "")),
        ca_file=Path(env.get("DBSCALE_TEST_MYSQL_CA", "")),
    )
    try:
        server.sql("SELECT 1")
    except AssertionError as exc:
        skip_or_fail(f"the test MariaDB at {url} is not answering: {exc}")
    return server


def sysbench_binary() -> str:
    found = shutil.which("sysbench")
    if found is None:
        skip_or_fail("sysbench is not installed (apt-get install sysbench)")
        raise AssertionError("unreachable")
    return found


def sysbench_target_args(url: str) -> list[str]:
    """sysbench's connection options for a test server's URL (TLS off, as 1.0.20 has it)."""
    parts = urlsplit(url)
    db = parts.path.lstrip("/")
    if parts.scheme == "mysql":
        return ["--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={parts.port}",
                f"--mysql-user={parts.username}", f"--mysql-db={db}"]  # fmt: skip
    return ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", f"--pgsql-port={parts.port}",
            f"--pgsql-user={parts.username}", f"--pgsql-db={db}"]  # fmt: skip


def run_sysbench(test: str, url: str, *args: str, timeout_s: float = 120) -> str:
    """Runs `sysbench TEST <connection> ARGS`; returns stdout, asserting success."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "MYSQL"))}
    done = subprocess.run(
        [sysbench_binary(), test, *sysbench_target_args(url), *args],
        capture_output=True, text=True, env=env, check=False, timeout=timeout_s,
    )  # fmt: skip
    assert done.returncode == 0, f"sysbench {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout
