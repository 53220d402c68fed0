"""Starts and stops the test servers and writes the environment the tests read:

    python -m dbscale.testing.servers start --env-file .cache/test-servers.env
    python -m dbscale.testing.servers stop --env-file .cache/test-servers.env

The env file holds `export NAME='value'` lines (DBSCALE_TEST_PG_URL, _SOCKET_DIR, _CA,
_SCRAM_URL, ..., and DBSCALE_TEST_MYSQL_URL, _SOCKET, _CA, ... when MariaDB is installed) for
`make test` to source before `cargo test` and `pytest`. Each start makes fresh servers so no test
sees another run's tables; the log of the last one is kept. With DBSCALE_REQUIRE_SERVERS=1 (CI) a
MariaDB that is missing or cannot start is an error; elsewhere the MySQL tests just skip.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from dbscale.errors import DbscaleError, LocalServerError
from dbscale.targets.local.embedded import reachable_by_others
from dbscale.targets.local.mariadb import LocalMariaDB, find_mariadb_binaries
from dbscale.targets.local.postgres import LocalPostgres
from dbscale.targets.local.server import LocalServer, SettingValue

# Durability is not under test; this keeps loading and the suite fast on a small box.
TEST_SETTINGS: dict[str, SettingValue] = {
    "fsync": False,
    "synchronous_commit": False,
    "full_page_writes": False,
}
MARIADB_TEST_SETTINGS: dict[str, SettingValue] = {
    "innodb_flush_log_at_trx_commit": 0,
    "innodb_doublewrite": 0,
}


def default_dir(repo: Path) -> Path:
    """`<repo>/.cache/test-servers`, unless we are root and the postgres (or mysql) OS user cannot
    reach it (e.g. a clone under /root): then a directory under /var/tmp named after the repo."""
    preferred = repo / ".cache" / "test-servers"
    if os.geteuid() != 0 or reachable_by_others(preferred):
        return preferred
    digest = hashlib.sha256(str(repo.absolute()).encode()).hexdigest()[:10]
    return Path("/var/tmp") / f"dbscale-test-servers-{digest}"


def postgres_env(pg: LocalPostgres) -> dict[str, str]:
    return {
        "DBSCALE_TEST_PG_URL": pg.url,
        "DBSCALE_TEST_PG_SOCKET_DIR": str(pg.socket_dir),
        "DBSCALE_TEST_PG_PORT": str(pg.port),
        "DBSCALE_TEST_PG_CA": str(pg.ca_file),
        "DBSCALE_TEST_PG_SCRAM_URL": pg.password_url,
        "DBSCALE_TEST_PG_BIN": str(pg.binaries.bin_dir),
        "DBSCALE_TEST_PG_DIR": str(pg.base_dir),
        "DBSCALE_TEST_PG_LOG": str(pg.log_file),
    }


def mariadb_env(db: LocalMariaDB) -> dict[str, str]:
    return {
        "DBSCALE_TEST_MYSQL_URL": db.url,
        "DBSCALE_TEST_MYSQL_PASSWORD_URL": db.password_url,
        "DBSCALE_TEST_MYSQL_SOCKET": str(db.socket_path),
        "DBSCALE_TEST_MYSQL_PORT": str(db.port),
        "DBSCALE_TEST_MYSQL_CA": str(db.ca_file),
        "DBSCALE_TEST_MYSQL_DIR": str(db.base_dir),
        "DBSCALE_TEST_MYSQL_LOG": str(db.log_file),
    }


def write_env_file(path: Path, env: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "# Written by `python -m dbscale.testing.servers start`; source it.\n"
    text += "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def read_env_file(path: Path) -> dict[str, str]:
    env: dict[str, str] = {}
    if not path.is_file():
        return env
    for line in path.read_text().splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export ") :].partition("=")
            parts = shlex.split(value)
            env[key] = parts[0] if parts else ""
    return env


def start(env_file: Path, base_dir: Path, *, require: bool = False) -> None:
    stop(env_file)
    pg = LocalPostgres(base_dir / "postgres", settings=TEST_SETTINGS)
    pg.destroy()
    pg.start()
    env = postgres_env(pg)
    print(f"test PostgreSQL running: {pg.url} (log {pg.log_file})")
    try:
        env.update(start_mariadb(base_dir / "mariadb", require=require))
    finally:
        write_env_file(env_file, env)  # so `stop` finds whatever did start
    print(f"environment written to {env_file}")


def start_mariadb(directory: Path, *, require: bool) -> dict[str, str]:
    """A fresh test MariaDB and its variables; {} when it is not installed and not required."""
    if find_mariadb_binaries() is None:
        if require:
            raise LocalServerError(
                "MariaDB is not installed, and DBSCALE_REQUIRE_SERVERS=1 requires it",
                "run `bash scripts/install-system-deps.sh` (installs mariadb-server)",
            )
        print("MariaDB is not installed: MySQL tests skip (apt-get install mariadb-server)")
        return {}
    db = LocalMariaDB(directory, settings=MARIADB_TEST_SETTINGS)
    try:
        db.destroy()
        db.start()
    except LocalServerError as exc:
        if require:
            raise
        print(f"warning: the test MariaDB did not start, the MySQL tests will skip: {exc.message}")
        return {}
    print(f"test MariaDB running: {db.url} (log {db.log_file})")
    return mariadb_env(db)


def stop(env_file: Path) -> None:
    env = read_env_file(env_file)
    servers: tuple[tuple[str, type[LocalServer[Any]]], ...] = (
        ("DBSCALE_TEST_PG_DIR", LocalPostgres), ("DBSCALE_TEST_MYSQL_DIR", LocalMariaDB),
    )  # fmt: skip
    for variable, kind in servers:
        directory = env.get(variable)
        if directory and Path(directory).is_dir():
            server = kind(Path(directory))
            if server.running_pid() is not None:
                server.stop()
                print(f"test {server.title} in {directory} stopped (log {server.log_file})")
    if env_file.exists():
        env_file.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dbscale.testing.servers")
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("--env-file", type=Path, default=Path(".cache/test-servers.env"))
    parser.add_argument("--dir", type=Path, default=None, help="where the servers live")
    args = parser.parse_args(argv)
    try:
        if args.action == "start":
            # One server set per env file, so separate suites (tests, benchmarks) never share
            # or destroy each other's servers.
            start(
                args.env_file,
                (args.dir or default_dir(Path.cwd())) / args.env_file.stem,
                require=os.environ.get("DBSCALE_REQUIRE_SERVERS") == "1",
            )
        else:
            stop(args.env_file)
    except DbscaleError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
