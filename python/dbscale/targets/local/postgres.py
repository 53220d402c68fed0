"""A private PostgreSQL server that dbscale owns: its own directory, port and socket directory,
trust auth on loopback plus one scram-sha-256 user, TLS from a private CA, settings sized for a
small box. The embedded target and the test servers are both this class.

Layout of `base_dir`: `data/` (PGDATA), `run/` (Unix socket), `tls/` (CA and server
certificate), `postgres.log` (kept across starts). PostgreSQL refuses to run as root, so when we
are root every program runs as the `postgres` OS user, which owns `base_dir`.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from urllib.parse import quote

from dbscale.errors import LocalServerError
from dbscale.targets.local.binaries import PostgresBinaries, find_postgres_binaries
from dbscale.targets.tls import TlsFiles, make_certificates

ADMIN_USER = "postgres"
SCRAM_USER = "dbscale_scram"
SCRAM_PASSWORD = "scram-secret"
ROOT_RUNS_AS = "postgres"
SettingValue = str | int | float | bool

DEFAULT_SETTINGS: dict[str, SettingValue] = {
    "listen_addresses": "127.0.0.1",
    "max_connections": 300,
    "shared_buffers": "256MB",
    "max_wal_size": "2GB",
    "password_encryption": "scram-sha-256",
    "ssl": True,
    "logging_collector": False,
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
_CONF_INCLUDE = "include_if_exists = 'dbscale.conf'"


def _conf_value(value: SettingValue) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return str(value)
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalPostgres:
    """One private server. `with LocalPostgres(dir) as pg:` initializes it if needed, starts it
    unless it already runs, and stops it afterwards only if this object started it."""

    def __init__(
        self,
        base_dir: Path,
        *,
        port: int | None = None,
        settings: Mapping[str, SettingValue] | None = None,
        binaries: PostgresBinaries | None = None,
        start_timeout_s: float = 60.0,
    ) -> None:
        self.base_dir = base_dir.absolute()
        self.data_dir = self.base_dir / "data"
        self.socket_dir = self.base_dir / "run"
        self.tls = TlsFiles.in_dir(self.base_dir / "tls")
        self.log_file = self.base_dir / "postgres.log"
        self.settings: dict[str, SettingValue] = {**DEFAULT_SETTINGS, **(settings or {})}
        self._fixed_port = port
        self._port: int | None = port
        self._binaries = binaries
        self._start_timeout_s = start_timeout_s
        self._started_here = False
        self._os_user = ROOT_RUNS_AS if os.geteuid() == 0 else None

    # -- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise LocalServerError(f"the server in {self.base_dir} has not been started")
        return self._port

    @property
    def url(self) -> str:
        """TCP URL for the admin user (trust auth, no password)."""
        return f"postgresql://{ADMIN_USER}@127.0.0.1:{self.port}/postgres"

    @property
    def socket_url(self) -> str:
        """Unix-socket URL for the admin user (libpq's `host=` query form)."""
        return f"postgresql://{ADMIN_USER}@/postgres?host={quote(str(self.socket_dir))}&port={self.port}"

    @property
    def scram_url(self) -> str:
        """TCP URL for the scram-sha-256 user, password included."""
        return f"postgresql://{SCRAM_USER}:{SCRAM_PASSWORD}@127.0.0.1:{self.port}/postgres"

    @property
    def ca_file(self) -> Path:
        return self.tls.ca_cert

    @property
    def binaries(self) -> PostgresBinaries:
        if self._binaries is None:
            self._binaries = find_postgres_binaries()
        return self._binaries

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
            what="initdb",
        )  # fmt: skip
        (self.data_dir / "pg_hba.conf").write_text(_HBA)
        with (self.data_dir / "postgresql.conf").open("a") as conf:
            conf.write(f"\n{_CONF_INCLUDE}\n")
        make_certificates(self.tls.ca_cert.parent)
        self._chown_tree()

    def running_port(self) -> int | None:
        """The port of a postmaster running on our data dir, from postmaster.pid."""
        pid_file = self.data_dir / "postmaster.pid"
        try:
            lines = pid_file.read_text().splitlines()
            pid, port = int(lines[0]), int(lines[3])
        except (OSError, IndexError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # alive, owned by someone else
        return port

    def status(self) -> str:
        if not self.is_initialized():
            return "uninitialized"
        return "running" if self.running_port() is not None else "stopped"

    def start(self) -> bool:
        """Starts the server unless it already runs; True if this call started it."""
        self.init()
        running = self.running_port()
        if running is not None:
            self._port = running
            self.wait_ready()
            return False
        attempts = 1 if self._fixed_port is not None else 3
        self._started_here = True  # from here on, __exit__ (or a failure) must stop it
        for attempt in range(1, attempts + 1):
            self._port = self._fixed_port or free_port()
            self._write_settings()
            # A session of its own: Ctrl-C at the terminal must reach dbscale, which cancels the
            # run cleanly, not the postmaster, for which SIGINT means "fast shutdown".
            done = self._run(
                [self.binaries.tool("pg_ctl"), "-D", self.data_dir, "-l", self.log_file,
                 "-w", "-t", str(int(self._start_timeout_s)), "start"],
                what="pg_ctl start", check=False, new_session=True,
            )  # fmt: skip
            if done.returncode == 0:
                break
            if attempt == attempts or "could not bind" not in self.log_tail():
                self._started_here = False
                raise LocalServerError(
                    f"PostgreSQL in {self.data_dir} did not start: {self._last_log_line()}",
                    f"see the server log {self.log_file}",
                )
        self.wait_ready()
        self.psql(_CREATE_SCRAM_USER)
        return True

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Returns once the server accepts connections (pg_isready), else `LocalServerError`."""
        deadline = time.monotonic() + timeout_s
        isready = self.binaries.bin_dir / "pg_isready"
        while True:
            cmd = [str(isready), "-q", "-h", str(self.socket_dir), "-p", str(self.port)]
            if not isready.is_file():
                cmd = [str(self.binaries.tool("psql")), *self._psql_args("postgres"), "-c", ""]
            done = subprocess.run(cmd, capture_output=True, env=_clean_env(), check=False)
            if done.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise LocalServerError(
                    f"PostgreSQL on port {self.port} is not accepting connections",
                    f"see the server log {self.log_file}",
                )
            time.sleep(0.1)

    def stop(self) -> None:
        """Fast shutdown (rolls back open transactions), if it runs."""
        if self.running_port() is None:
            return
        self._run(
            [self.binaries.tool("pg_ctl"), "-D", self.data_dir, "-m", "fast", "-w", "-t", "60",
             "stop"],
            what="pg_ctl stop",
        )  # fmt: skip
        self._started_here = False

    def destroy(self) -> None:
        """Stops the server and removes the data and TLS directories (the log stays)."""
        self.stop()
        for path in (self.data_dir, self.tls.ca_cert.parent, self.socket_dir):
            shutil.rmtree(path, ignore_errors=True)

    def __enter__(self) -> LocalPostgres:
        try:
            self.start()
        except BaseException:
            if self._started_here:  # interrupted or failed half-way: leave nothing running
                self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._started_here:
            self.stop()

    # -- administration ----------------------------------------------------------------------

    def psql(self, sql: str, dbname: str = "postgres") -> str:
        """Runs SQL as the admin user over the socket; unaligned, tuples-only output."""
        done = subprocess.run(
            [str(self.binaries.tool("psql")), *self._psql_args(dbname), "-c", sql],
            capture_output=True, text=True, env=_clean_env(), check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise LocalServerError(
                f"psql failed on the private server: {done.stderr.strip()}",
                f"see the server log {self.log_file}",
            )
        return done.stdout.strip()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # -- internals ---------------------------------------------------------------------------

    def _psql_args(self, dbname: str) -> list[str]:
        return ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", str(self.socket_dir),
                "-p", str(self.port), "-U", ADMIN_USER, "-d", dbname]  # fmt: skip

    def _last_log_line(self) -> str:
        tail = [line for line in self.log_tail().splitlines() if line.strip()]
        return tail[-1] if tail else "no log output"

    def _write_settings(self) -> None:
        settings = {
            **self.settings,
            "port": self.port,
            "unix_socket_directories": str(self.socket_dir),
            "ssl_cert_file": str(self.tls.server_cert),
            "ssl_key_file": str(self.tls.server_key),
        }
        text = "# Written by dbscale at each start; edit the settings in code, not here.\n"
        text += "".join(f"{k} = {_conf_value(v)}\n" for k, v in settings.items())
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / "dbscale.conf").write_text(text)
        self._chown(self.socket_dir, self.data_dir / "dbscale.conf")

    def _make_base_dir(self) -> None:
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self._chown_tree()
        if self._os_user is not None:
            uid, gid = self._user_ids()
            probe = subprocess.run(
                ["test", "-w", str(self.base_dir)], user=uid, group=gid, extra_groups=[],
                check=False,
            )  # fmt: skip
            if probe.returncode != 0:
                raise LocalServerError(
                    f"the {self._os_user} OS user cannot write {self.base_dir}",
                    "PostgreSQL refuses to run as root; choose a directory every user can reach "
                    "(e.g. under /var/tmp)",
                )

    def _user_ids(self) -> tuple[int | None, int | None]:
        if self._os_user is None:
            return None, None
        entry = pwd.getpwnam(self._os_user)
        return entry.pw_uid, entry.pw_gid

    def _chown(self, *paths: Path) -> None:
        uid, gid = self._user_ids()
        if uid is None or gid is None:
            return
        for path in paths:
            os.chown(path, uid, gid)

    def _chown_tree(self) -> None:
        if self._os_user is None:
            return
        for root, dirs, files in os.walk(self.base_dir):
            here = Path(root)
            self._chown(here, *(here / d for d in dirs), *(here / f for f in files))

    def _run(
        self,
        args: Sequence[str | Path],
        *,
        what: str,
        check: bool = True,
        new_session: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        uid, gid = self._user_ids()
        try:
            done = subprocess.run(
                [str(a) for a in args], capture_output=True, text=True, cwd=self.base_dir,
                env=_clean_env(), user=uid, group=gid, extra_groups=None if uid is None else [],
                start_new_session=new_session, check=False,
            )  # fmt: skip
        except OSError as exc:
            raise LocalServerError(f"{what} could not be run: {exc}") from None
        if check and done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise LocalServerError(
                f"{what} failed in {self.base_dir}: {detail[-1] if detail else done.returncode}",
                f"see the server log {self.log_file}",
            )
        return done


def _clean_env() -> dict[str, str]:
    """The environment without libpq variables, which would redirect our own tools."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.setdefault("LC_ALL", "C")
    return env
