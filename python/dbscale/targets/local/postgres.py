"""A private PostgreSQL server that dbscale owns: its own directory, port and socket directory,
trust auth on loopback plus one scram-sha-256 user, TLS from a private CA, settings sized for a
small box. The embedded target and the test servers are both this class.

Layout of `base_dir`: `data/` (PGDATA), `run/` (Unix socket), `tls/` (CA and server
certificate), `postgres.log` (kept across starts). PostgreSQL refuses to run as root, so when we
are root every program runs as the `postgres` OS user, which owns `base_dir`.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from dbscale.errors import LocalServerError
from dbscale.polling import poll_until
from dbscale.targets.local.binaries import PostgresBinaries, find_postgres_binaries
from dbscale.targets.local.server import LocalServer, SettingValue, pid_alive
from dbscale.targets.tls import make_certificates

ADMIN_USER = "postgres"
SCRAM_USER = "dbscale_scram"
SCRAM_PASSWORD = "scram-secret"

DEFAULT_SETTINGS: dict[str, SettingValue] = {
    "listen_addresses": "127.0.0.1",
    "max_connections": 300,
    "shared_buffers": "256MB",
    "max_wal_size": "2GB",
    "password_encryption": "scram-sha-256",
    "ssl": True,
    "logging_collector": False,
    # Statement figures per run (observe/statements.py); the extension is created in
    # template1 and postgres at each start, so every database made after has it too.
    "shared_preload_libraries": "pg_stat_statements",
}
_HBA = f"""\
# Written by dbscale: trust on the socket and loopback, scram-sha-256 for {SCRAM_USER}.
local   all  {SCRAM_USER}  scram-sha-256
host    all  {SCRAM_USER}  127.0.0.1/32  scram-sha-256
local   all  all  trust
host    all  all  127.0.0.1/32  trust
host    all  all  ::1/128  trust
"""
_CREATE_SCRAM_USER = f"""\
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{SCRAM_USER}') THEN
    -- superuser: the auth tests run whole workloads (vacuum, truncate) on others' tables
    CREATE ROLE {SCRAM_USER} LOGIN SUPERUSER PASSWORD '{SCRAM_PASSWORD}';
  END IF;
END $$;"""
# A standby has it from its primary (and may not write).
_CREATE_STATEMENTS_VIEW = """\
DO $$ BEGIN
  IF NOT pg_is_in_recovery() THEN
    CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
  END IF;
END $$;"""
_CONF_INCLUDE = "include_if_exists = 'dbscale.conf'"


def _conf_value(value: SettingValue) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return str(value)
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


class LocalPostgres(LocalServer[PostgresBinaries]):
    """One private PostgreSQL server (see `LocalServer` for the lifecycle)."""

    engine = "postgresql"
    title = "PostgreSQL"
    runs_as_when_root = "postgres"
    default_settings = DEFAULT_SETTINGS
    log_name = "postgres.log"
    url_form = f"postgresql://{ADMIN_USER}@127.0.0.1:{{port}}/postgres"
    socket_url_form = f"postgresql://{ADMIN_USER}@/postgres?host={{run_dir}}&port={{port}}"
    password_url_form = (  # the scram-sha-256 user
        f"postgresql://{SCRAM_USER}:{SCRAM_PASSWORD}@127.0.0.1:{{port}}/postgres"
    )

    def _find_binaries(self) -> PostgresBinaries:
        return find_postgres_binaries()

    # -- lifecycle ---------------------------------------------------------------------------

    def is_initialized(self) -> bool:
        return (self.data_dir / "PG_VERSION").is_file()

    def init(self) -> None:
        """initdb (once), pg_hba.conf, TLS files, and the include of our settings file."""
        if self.is_initialized():
            return
        self._make_base_dir()
        if self.data_dir.exists():
            shutil.rmtree(self.data_dir)  # a half-made data dir from an interrupted initdb
        self._run(
            [self.binaries.tool("initdb"), "-D", self.data_dir, "-U", ADMIN_USER,
             "--auth=trust", "--encoding=UTF8", "--locale=C"],
            what="initdb", as_server_user=True,
        )  # fmt: skip
        (self.data_dir / "pg_hba.conf").write_text(_HBA)
        with (self.data_dir / "postgresql.conf").open("a") as conf:
            conf.write(f"\n{_CONF_INCLUDE}\n")
        make_certificates(self.tls.ca_cert.parent)
        self._chown_tree()

    def _postmaster(self) -> tuple[int, int] | None:
        """(pid, port) of a live postmaster on our data dir, from postmaster.pid."""
        try:
            lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
            pid, port = int(lines[0]), int(lines[3])
        except (OSError, IndexError, ValueError):
            return None
        return (pid, port) if pid_alive(pid) else None

    def running_pid(self) -> int | None:
        found = self._postmaster()
        return found[0] if found else None

    def running_port(self) -> int | None:
        found = self._postmaster()
        return found[1] if found else None

    def _launch(self, port: int) -> None:
        self._write_settings(port)
        done = self._run(
            [self.binaries.tool("pg_ctl"), "-D", self.data_dir, "-l", self.log_file,
             "-w", "-t", str(int(self._start_timeout_s)), "start"],
            what="pg_ctl start", as_server_user=True, check=False, new_session=True,
        )  # fmt: skip
        if done.returncode != 0:
            raise self._failed_to_start(self._last_log_line())
        self.wait_ready()

    def _bootstrap(self) -> None:
        self.psql(_CREATE_SCRAM_USER)
        if "pg_stat_statements" in str(self.settings.get("shared_preload_libraries", "")):
            for database in ("template1", "postgres"):
                self.psql(_CREATE_STATEMENTS_VIEW, database)

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Returns once the server accepts connections (pg_isready), else `LocalServerError`."""
        isready = self.binaries.bin_dir / "pg_isready"
        cmd = [str(isready), "-q", "-h", str(self.socket_dir), "-p", str(self.port)]
        if not isready.is_file():
            cmd = [str(self.binaries.tool("psql")), *self._psql_args("postgres"), "-c", ""]

        def accepting() -> bool:
            done = subprocess.run(cmd, capture_output=True, env=self._tool_env(), check=False)
            return done.returncode == 0

        if not poll_until(accepting, timeout_s, 0.1):
            raise LocalServerError(
                f"PostgreSQL on port {self.port} is not accepting connections",
                f"see the server log {self.log_file}",
            )

    def _after_kill(self) -> None:
        """A killed postmaster's lock files go: one its parent has not reaped yet still answers
        `kill -0`, and PostgreSQL would refuse to start over lock files naming it."""
        (self.data_dir / "postmaster.pid").unlink(missing_ok=True)
        for lock in self.socket_dir.glob(".s.PGSQL.*.lock"):
            lock.unlink(missing_ok=True)

    def _shut_down(self, pid: int, timeout_s: float) -> None:
        """Fast shutdown (rolls back open transactions)."""
        self._run(
            [self.binaries.tool("pg_ctl"), "-D", self.data_dir, "-m", "fast", "-w",
             "-t", str(int(timeout_s)), "stop"],
            what="pg_ctl stop", as_server_user=True,
        )  # fmt: skip

    # -- administration ----------------------------------------------------------------------

    def psql(self, sql: str, dbname: str = "postgres") -> str:
        """Runs SQL as the admin user over the socket; unaligned, tuples-only output."""
        done = subprocess.run(
            [str(self.binaries.tool("psql")), *self._psql_args(dbname), "-c", sql],
            capture_output=True, text=True, env=self._tool_env(), check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise LocalServerError(
                f"psql failed on the private server: {done.stderr.strip()}",
                f"see the server log {self.log_file}",
            )
        return done.stdout.strip()

    # -- internals ---------------------------------------------------------------------------

    def _tool_env(self) -> dict[str, str]:
        """The environment without libpq variables, which would redirect our own tools."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.setdefault("LC_ALL", "C")
        return env

    def _psql_args(self, dbname: str) -> list[str]:
        return ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", str(self.socket_dir),
                "-p", str(self.port), "-U", ADMIN_USER, "-d", dbname]  # fmt: skip

    def _write_settings(self, port: int) -> None:
        settings = {
            **self.settings,
            "port": port,
            "unix_socket_directories": str(self.socket_dir),
            "ssl_cert_file": str(self.tls.server_cert),
            "ssl_key_file": str(self.tls.server_key),
        }
        text = "# Written by dbscale at each start; edit the settings in code, not here.\n"
        text += "".join(f"{k} = {_conf_value(v)}\n" for k, v in settings.items())
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / "dbscale.conf").write_text(text)
        self._chown(self.socket_dir, self.data_dir / "dbscale.conf")
