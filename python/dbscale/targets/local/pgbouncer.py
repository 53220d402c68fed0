"""A private PgBouncer in front of a local PostgreSQL target, for the study's `pooling: on` points
(seed 000's "with connection pooling") when the target names no pooler of its own.

It listens on a free loopback port, reaches the server over its Unix socket, and pools in
session mode: each client connection holds one server connection while it lasts, so every
statement (server-side prepared ones included) behaves as it does without the pooler, and a
client that connects per transaction (`--connect per-transaction`) reuses a server backend
instead of forking one. Authentication is trust, as on the local server itself; TLS to the
pooler uses the server's certificate. Its files are in `<target dir>/pgbouncer/`: the settings,
the user list, the log (kept across starts) and the pid file. As root it runs as the server's
OS user, as PgBouncer refuses root.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

from dbscale.errors import LocalServerError
from dbscale.polling import poll_until
from dbscale.targets.local.evidence import PoolerFacts
from dbscale.targets.local.postgres import ADMIN_USER, LocalPostgres
from dbscale.targets.local.server import free_port

PROGRAM_PLACES = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")
POOL_MODE = "session"
MAX_CLIENT_CONNECTIONS = 10_000
# Server connections the pooler keeps free for the observer and the administrator.
SERVER_RESERVE = 10
START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 10.0
PID_FILE = "pgbouncer.pid"


def find_pgbouncer() -> Path:
    """The `pgbouncer` program, or a `LocalServerError` saying how to install it."""
    found = shutil.which("pgbouncer") or next(
        (p for p in PROGRAM_PLACES if os.access(p, os.X_OK)), None
    )
    if found is None:
        raise LocalServerError(
            "pooling: on for a local target needs PgBouncer, which is not installed",
            "`make system-deps` installs it (Debian: apt-get install pgbouncer), or give the "
            "target a pooled_url",
        )
    return Path(found)


class LocalPgBouncer:
    """One PgBouncer for one local server; `start()` then `url`, and `stop()`."""

    def __init__(self, server: LocalPostgres, directory: Path) -> None:
        self.server = server
        self.directory = directory.absolute()
        self.config_file = self.directory / "pgbouncer.ini"
        self.log_file = self.directory / "pgbouncer.log"
        self.pool_size = max(int(server.settings.get("max_connections", 100)) - SERVER_RESERVE, 1)
        self._port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The administrator's URL through the pooler, to the server's `postgres` database."""
        return f"postgresql://{ADMIN_USER}@127.0.0.1:{self.port}/postgres"

    @property
    def port(self) -> int:
        if self._port is None:
            raise LocalServerError("the local PgBouncer has not been started")
        return self._port

    def start(self) -> PoolerFacts:
        """Starts it on a free port and waits until it accepts connections; its facts."""
        program = find_pgbouncer()
        self.directory.mkdir(parents=True, exist_ok=True)
        self._stop_orphan()
        self._port = free_port()
        self._write_files()
        self.log_file.touch()
        user = self.server.runs_as_when_root if os.geteuid() == 0 else None
        if user is not None:
            shutil.chown(self.directory, user)
            for path in self.directory.iterdir():
                shutil.chown(path, user)
        with self.log_file.open("ab") as log:
            self._process = subprocess.Popen(
                [str(program), "-q", str(self.config_file)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                user=user, start_new_session=True,
            )  # fmt: skip
        self._wait_accepting()
        return self.facts(program)

    def facts(self, program: Path) -> PoolerFacts:
        """What the record keeps of it (targets/<name>.json)."""
        done = subprocess.run([str(program), "--version"], capture_output=True, text=True)
        version = done.stdout.splitlines()[0] if done.stdout else "unknown"
        return PoolerFacts(
            program="pgbouncer", version=version, pool_mode=POOL_MODE, port=self.port,
            pool_size=self.pool_size, max_client_connections=MAX_CLIENT_CONNECTIONS,
            log=str(self.log_file),
        )  # fmt: skip

    def stop(self) -> None:
        """Shuts it down (SIGTERM), killing it if it does not go in time."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _stop_orphan(self) -> None:
        """A PgBouncer left running here by a dbscale that was killed: it would keep server
        connections of its pool open, so it is stopped before a new one starts."""
        pid_file = self.directory / PID_FILE
        try:
            pid = int(pid_file.read_text().split()[0])
            command = Path(f"/proc/{pid}/comm").read_text().strip()
        except (OSError, ValueError, IndexError):
            return
        if command != "pgbouncer":
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not poll_until(lambda: not _running(pid), STOP_TIMEOUT_S, 0.05):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def _write_files(self) -> None:
        tls = self.server.tls
        (self.directory / "userlist.txt").write_text(f'"{ADMIN_USER}" ""\n')
        self.config_file.write_text(
            "; Written by dbscale for one study's pooling: on points.\n"
            "[databases]\n"
            f"* = host={self.server.socket_dir} port={self.server.port}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {self.directory / 'userlist.txt'}\n"
            f"admin_users = {ADMIN_USER}\n"
            f"pool_mode = {POOL_MODE}\nserver_reset_query = DISCARD ALL\n"
            f"max_client_conn = {MAX_CLIENT_CONNECTIONS}\n"
            f"default_pool_size = {self.pool_size}\nmax_db_connections = {self.pool_size}\n"
            "ignore_startup_parameters = extra_float_digits,options\n"
            # thousands of connections a second under --connect per-transaction: not logged
            "log_connections = 0\nlog_disconnections = 0\n"
            f"client_tls_sslmode = allow\nclient_tls_cert_file = {tls.server_cert}\n"
            f"client_tls_key_file = {tls.server_key}\n"
            f"logfile = {self.log_file}\npidfile = {self.directory / PID_FILE}\n"
        )

    def _wait_accepting(self) -> None:
        def listening() -> bool:
            process = self._process
            if process is None or process.poll() is not None:
                raise self._failed("PgBouncer exited as it started")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0):
                    return True
            except OSError:
                return False

        if not poll_until(listening, START_TIMEOUT_S, 0.05):
            self.stop()
            raise self._failed(f"PgBouncer did not listen on port {self.port}")

    def _failed(self, what: str) -> LocalServerError:
        log = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
        last = log.splitlines()[-1] if log.strip() else "no log"
        return LocalServerError(f"{what}: {last}", f"see its log {self.log_file}")


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting for its parent."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
