"""A private MariaDB server that dbscale owns (a `LocalServer`, like `LocalPostgres`): its
own directory, port and Unix socket, TLS from the private CA, settings sized for a small box,
started in a session of its own and stopped by SIGTERM. The test servers and the sysbench
benchmark use it.

Layout of `base_dir`: `data/` (datadir), `run/` (socket and pid file), `tls/` (CA and server
certificate), `my.cnf` (rewritten at each start), `mariadb.log` (the error log, kept across
starts). As root the server runs as the `mysql` OS user, which owns `base_dir`.

Accounts made at each start: `root@127.0.0.1` with no password (TCP, all privileges),
`dbscale@127.0.0.1` / `dbscale-pw` (password auth over TCP), `root@localhost` by unix_socket
(the OS user root over the socket; for another OS user, its own socket account, plus an empty
password for root); no anonymous users; databases `sbtest` and `dbscale_test`.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbscale.errors import LocalServerError
from dbscale.polling import poll_until
from dbscale.targets.local.server import LocalServer, SettingValue, pid_alive
from dbscale.targets.tls import make_certificates

PASSWORD_USER = "dbscale"
PASSWORD = "dbscale-pw"
DATABASES = ("sbtest", "dbscale_test")
DEFAULT_DATABASE = "dbscale_test"

DEFAULT_SETTINGS: dict[str, SettingValue] = {
    "bind-address": "127.0.0.1",
    "skip-name-resolve": True,
    "innodb_buffer_pool_size": "256M",
    "innodb_log_file_size": "256M",
    "innodb_flush_log_at_trx_commit": 2,
    "max_connections": 200,
    # sysbench prepares every statement on every connection: many tables x many clients.
    "max_prepared_stmt_count": 100000,
    # Statement digests per run (observe/statements.py) and the wait totals.
    "performance_schema": "ON",
}
_SERVER_NAMES = ("mariadbd", "mysqld")
_SEARCH_DIRS = (
    Path("/usr/sbin"),
    Path("/usr/bin"),
    Path("/usr/local/sbin"),
    Path("/usr/local/bin"),
)


@dataclass(frozen=True)
class MariaDBBinaries:
    """The server, the data-directory initializer and the command-line client."""

    server: Path
    install_db: Path
    client: Path


def _find(names: Sequence[str]) -> Path | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return Path(found)
        for directory in _SEARCH_DIRS:
            if (directory / name).is_file():
                return directory / name
    return None


def find_mariadb_binaries() -> MariaDBBinaries | None:
    """MariaDB's programs, or None when the server is not installed. (Oracle MySQL's `mysqld`
    has no mariadb-install-db and is not supported as a private server.)"""
    server = _find(_SERVER_NAMES)
    install_db = _find(("mariadb-install-db", "mysql_install_db"))
    client = _find(("mariadb", "mysql"))
    if server is None or install_db is None or client is None:
        return None
    return MariaDBBinaries(server=server, install_db=install_db, client=client)


def _cnf_line(key: str, value: SettingValue) -> str:
    if value is True:
        return key
    if value is False:
        return f"{key}=0"
    return f"{key}={value}"


class LocalMariaDB(LocalServer[MariaDBBinaries]):
    """One private MariaDB server (see `LocalServer` for the lifecycle)."""

    engine = "mariadb"
    title = "MariaDB"
    runs_as_when_root = "mysql"
    default_settings = DEFAULT_SETTINGS
    log_name = "mariadb.log"
    url_form = f"mysql://root@127.0.0.1:{{port}}/{DEFAULT_DATABASE}"
    # root by unix_socket authentication when we are OS root
    socket_url_form = f"mysql://root@localhost/{DEFAULT_DATABASE}?socket={{run_dir}}/mysqld.sock"
    password_url_form = f"mysql://{PASSWORD_USER}:{PASSWORD}@127.0.0.1:{{port}}/{DEFAULT_DATABASE}"

    def __init__(self, base_dir: Path, **options: Any) -> None:
        super().__init__(base_dir, **options)
        self.socket_path = self.run_dir / "mysqld.sock"
        self.pid_file = self.run_dir / "mariadbd.pid"
        self.cnf_file = self.base_dir / "my.cnf"
        self._process: subprocess.Popen[bytes] | None = None

    def _find_binaries(self) -> MariaDBBinaries:
        found = find_mariadb_binaries()
        if found is None:
            raise LocalServerError(
                "no MariaDB server programs (mariadbd, mariadb-install-db, mariadb) found",
                "install them (e.g. `apt-get install mariadb-server`), or benchmark a "
                "running server with --target mysql://...",
            )
        return found

    # -- lifecycle ---------------------------------------------------------------------------

    def is_initialized(self) -> bool:
        return (self.data_dir / "mysql").is_dir()

    def init(self) -> None:
        """mariadb-install-db (once) and the TLS files."""
        make_certificates(self.tls.ca_cert.parent)
        if self.is_initialized():
            self._chown_tree()
            return
        self._make_base_dir()
        if self.data_dir.exists():
            shutil.rmtree(self.data_dir)  # a half-made datadir from an interrupted install
        self._write_cnf(self._port or 0)
        self._chown_tree()
        # As root the server runs as `mysql`; otherwise as us, with our own socket account.
        user = (
            ["--user", self._os_user]
            if self._os_user
            else [f"--auth-root-socket-user={self._socket_account()}"]
        )
        self._run(
            [self.binaries.install_db, f"--defaults-file={self.cnf_file}", *user,
             f"--datadir={self.data_dir}", "--auth-root-authentication-method=socket",
             "--skip-test-db"],
            what="mariadb-install-db",
        )  # fmt: skip

    def running_pid(self) -> int | None:
        """The pid of a server running on our datadir, from its pid file."""
        if self._process is not None and self._process.poll() is not None:
            return None  # our child exited (reaped here, so no zombie looks alive)
        try:
            pid = int(self.pid_file.read_text().split()[0])
        except (OSError, IndexError, ValueError):
            return None
        return pid if pid_alive(pid) else None

    def running_port(self) -> int | None:
        """The port in the my.cnf of a running server."""
        if self.running_pid() is None:
            return None
        try:
            lines = self.cnf_file.read_text().splitlines()
        except OSError:
            return None
        ports = [line.partition("=")[2] for line in lines if line.startswith("port=")]
        return int(ports[0]) if ports and ports[0].isdigit() else None

    def _launch(self, port: int) -> None:
        self._write_cnf(port)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._chown(self.run_dir)
        self.pid_file.unlink(missing_ok=True)
        with self.log_file.open("ab") as log:
            self._chown(self.log_file)
            try:
                # As root, mariadbd switches to `user=` from my.cnf itself.
                self._process = subprocess.Popen(
                    [str(self.binaries.server), f"--defaults-file={self.cnf_file}"],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.base_dir,
                    start_new_session=True,
                )  # fmt: skip
            except OSError as exc:
                raise LocalServerError(f"mariadbd could not be run: {exc}") from None
        self.wait_ready(self._start_timeout_s)

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Returns once the server answers over its socket, else `LocalServerError`."""

        def answering() -> bool:
            if self._process is not None and self._process.poll() is not None:
                raise LocalServerError(
                    f"MariaDB in {self.data_dir} exited at start: {self._last_log_line()}",
                    f"see the server log {self.log_file}",
                )
            return self.socket_path.exists() and self._client("SELECT 1", check=False)[0] == 0

        if not poll_until(answering, timeout_s, 0.1):
            raise LocalServerError(
                f"MariaDB on port {self._port} is not accepting connections after "
                f"{timeout_s:.0f} s: {self._last_log_line()}",
                f"see the server log {self.log_file}",
            )

    def stop(self, timeout_s: float = 60.0) -> None:
        """A clean shutdown (SIGTERM), waiting until the server has exited."""
        started = self._process
        if self.running_pid() is None and started is not None and started.poll() is None:
            started.terminate()  # started, but no pid file yet
            started.wait(timeout_s)
        super().stop(timeout_s)
        self._process = None

    def _shut_down(self, pid: int, timeout_s: float) -> None:
        os.kill(pid, signal.SIGTERM)
        if not poll_until(lambda: not self._alive(pid), timeout_s, 0.05):
            raise LocalServerError(
                f"MariaDB (pid {pid}) did not stop within {timeout_s:.0f} s",
                f"see the server log {self.log_file}",
            )

    # -- administration ----------------------------------------------------------------------

    def sql(self, sql: str, database: str | None = None) -> str:
        """Runs SQL as the OS user's socket account; tab-separated rows, no header."""
        code, out, err = self._client(sql, database=database, check=False)
        if code != 0:
            raise LocalServerError(
                f"SQL failed on the private MariaDB: {err.strip()}",
                f"see the server log {self.log_file}",
            )
        return out.strip()

    # -- internals ---------------------------------------------------------------------------

    def _bootstrap(self) -> None:
        """Accounts and databases; idempotent, so a restart re-applies it harmlessly."""
        statements = [
            "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY ''",
            "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION",
            f"CREATE USER IF NOT EXISTS '{PASSWORD_USER}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'",
            f"GRANT ALL PRIVILEGES ON *.* TO '{PASSWORD_USER}'@'127.0.0.1'",
            *(f"CREATE DATABASE IF NOT EXISTS {db}" for db in DATABASES),
        ]
        if self._os_user is None:
            # Another OS user than root cannot pass root's unix_socket check; let root in over
            # the socket with an empty password too, as over TCP.
            statements.append(
                "ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket "
                "OR mysql_native_password USING PASSWORD('')"
            )
        anonymous = self.sql("SELECT host FROM mysql.user WHERE user = ''")
        statements += [f"DROP USER ''@'{host}'" for host in anonymous.splitlines() if host]
        self.sql(";\n".join(statements))

    def _socket_account(self) -> str:
        """The account our OS user reaches by unix_socket: root, or its own (install-db made it
        for the user it ran as)."""
        return "root" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name

    def _client(
        self, sql: str, *, database: str | None = None, check: bool = True
    ) -> tuple[int, str, str]:
        args = [str(self.binaries.client), "--no-defaults", f"--socket={self.socket_path}",
                f"--user={self._socket_account()}", "--batch", "--skip-column-names",
                "--connect-timeout=5", "-e", sql]  # fmt: skip
        if database:
            args.append(database)
        done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=60)
        if check and done.returncode != 0:
            raise LocalServerError(f"the mariadb client failed: {done.stderr.strip()}")
        return done.returncode, done.stdout, done.stderr

    def _alive(self, pid: int) -> bool:
        if self._process is not None and self._process.pid == pid:
            return self._process.poll() is None
        return pid_alive(pid)

    def _write_cnf(self, port: int) -> None:
        paths: dict[str, SettingValue] = {
            "datadir": str(self.data_dir),
            "socket": str(self.socket_path),
            "port": port,
            "pid-file": str(self.pid_file),
            "log-error": str(self.log_file),
            "ssl-ca": str(self.tls.ca_cert),
            "ssl-cert": str(self.tls.server_cert),
            "ssl-key": str(self.tls.server_key),
        }
        if self._os_user is not None:
            paths["user"] = self._os_user
        lines = [_cnf_line(k, v) for k, v in {**paths, **self.settings}.items()]
        text = "# Written by dbscale at each start; edit the settings in code, not here.\n"
        text += "[mariadbd]\n" + "".join(f"{line}\n" for line in lines)
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.cnf_file.write_text(text)
