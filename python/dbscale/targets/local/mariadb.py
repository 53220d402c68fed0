"""A private MariaDB server that dbscale owns, shaped like `LocalPostgres`: its own directory,
port and Unix socket, TLS from the private CA, settings sized for a small box, started in a
session of its own (Ctrl-C at the terminal must reach dbscale, not the server) and stopped by
SIGTERM. The test servers and the sysbench benchmark use it.

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
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import quote

from dbscale.errors import LocalServerError
from dbscale.targets.local.postgres import free_port
from dbscale.targets.tls import TlsFiles, make_certificates

ROOT_RUNS_AS = "mysql"
PASSWORD_USER = "dbscale"
PASSWORD = "dbscale-pw"
DATABASES = ("sbtest", "dbscale_test")
DEFAULT_DATABASE = "dbscale_test"
SettingValue = str | int | float | bool

DEFAULT_SETTINGS: dict[str, SettingValue] = {
    "bind-address": "127.0.0.1",
    "skip-name-resolve": True,
    "innodb_buffer_pool_size": "256M",
    "innodb_log_file_size": "256M",
    "innodb_flush_log_at_trx_commit": 2,
    "max_connections": 200,
    # sysbench prepares every statement on every connection: many tables x many clients.
    "max_prepared_stmt_count": 100000,
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


class LocalMariaDB:
    """One private server. `with LocalMariaDB(dir) as db:` initializes it if needed, starts it
    unless it already runs, and stops it afterwards only if this object started it."""

    def __init__(
        self,
        base_dir: Path,
        *,
        port: int | None = None,
        settings: Mapping[str, SettingValue] | None = None,
        binaries: MariaDBBinaries | None = None,
        start_timeout_s: float = 60.0,
    ) -> None:
        self.base_dir = base_dir.absolute()
        self.data_dir = self.base_dir / "data"
        self.run_dir = self.base_dir / "run"
        self.socket_path = self.run_dir / "mysqld.sock"
        self.pid_file = self.run_dir / "mariadbd.pid"
        self.cnf_file = self.base_dir / "my.cnf"
        self.tls = TlsFiles.in_dir(self.base_dir / "tls")
        self.log_file = self.base_dir / "mariadb.log"
        self.settings: dict[str, SettingValue] = {**DEFAULT_SETTINGS, **(settings or {})}
        self._fixed_port = port
        self._port: int | None = port
        self._binaries = binaries
        self._start_timeout_s = start_timeout_s
        self._started_here = False
        self._process: subprocess.Popen[bytes] | None = None
        self._os_user = ROOT_RUNS_AS if os.geteuid() == 0 else None

    # -- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise LocalServerError(f"the MariaDB server in {self.base_dir} has not been started")
        return self._port

    def url(self, database: str = DEFAULT_DATABASE) -> str:
        """TCP URL for root (no password)."""
        return f"mysql://root@127.0.0.1:{self.port}/{database}"

    def password_url(self, database: str = DEFAULT_DATABASE) -> str:
        """TCP URL for the password user, password included."""
        return f"mysql://{PASSWORD_USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def socket_url(self, database: str = DEFAULT_DATABASE) -> str:
        """Unix-socket URL for root (unix_socket authentication when we are OS root)."""
        return f"mysql://root@localhost/{database}?socket={quote(str(self.socket_path))}"

    @property
    def ca_file(self) -> Path:
        return self.tls.ca_cert

    @property
    def binaries(self) -> MariaDBBinaries:
        if self._binaries is None:
            found = find_mariadb_binaries()
            if found is None:
                raise LocalServerError(
                    "no MariaDB server programs (mariadbd, mariadb-install-db, mariadb) found",
                    "install them (e.g. `apt-get install mariadb-server`), or benchmark a "
                    "running server with --target mysql://...",
                )
            self._binaries = found
        return self._binaries

    # -- lifecycle ---------------------------------------------------------------------------

    def is_initialized(self) -> bool:
        return (self.data_dir / "mysql").is_dir()

    def init(self) -> None:
        """mariadb-install-db (once) and the TLS files."""
        make_certificates(self.tls.ca_cert.parent)
        if self.is_initialized():
            self._chown_tree()
            return
        self.base_dir.mkdir(parents=True, exist_ok=True)
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
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # alive, owned by someone else
        return pid

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

    def status(self) -> str:
        if not self.is_initialized():
            return "uninitialized"
        return "running" if self.running_pid() is not None else "stopped"

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
            self._write_cnf(self._port)
            self._launch()
            try:
                self.wait_ready(self._start_timeout_s)
                break
            except LocalServerError:
                bind_failed = "bind" in self.log_tail().lower()
                self.stop()
                if attempt == attempts or not bind_failed:
                    self._started_here = False
                    raise
        self._bootstrap()
        return True

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Returns once the server answers over its socket, else `LocalServerError`."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self._process is not None and self._process.poll() is not None:
                raise LocalServerError(
                    f"MariaDB in {self.data_dir} exited at start: {self._last_log_line()}",
                    f"see the server log {self.log_file}",
                )
            if self.socket_path.exists() and self._client("SELECT 1", check=False)[0] == 0:
                return
            if time.monotonic() > deadline:
                raise LocalServerError(
                    f"MariaDB on port {self._port} is not accepting connections after "
                    f"{timeout_s:.0f} s: {self._last_log_line()}",
                    f"see the server log {self.log_file}",
                )
            time.sleep(0.1)

    def stop(self, timeout_s: float = 60.0) -> None:
        """A clean shutdown (SIGTERM), waiting until the server has exited."""
        pid = self.running_pid()
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout_s
            while self._alive(pid):
                if time.monotonic() > deadline:
                    raise LocalServerError(
                        f"MariaDB (pid {pid}) did not stop within {timeout_s:.0f} s",
                        f"see the server log {self.log_file}",
                    )
                time.sleep(0.05)
        elif self._process is not None and self._process.poll() is None:
            self._process.terminate()  # started, but no pid file yet
            self._process.wait(timeout_s)
        self._process = None
        self._started_here = False

    def destroy(self) -> None:
        """Stops the server and removes the data, TLS and run directories (the log stays)."""
        self.stop()
        for path in (self.data_dir, self.tls.ca_cert.parent, self.run_dir):
            shutil.rmtree(path, ignore_errors=True)

    def __enter__(self) -> LocalMariaDB:
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

    def sql(self, sql: str, database: str | None = None) -> str:
        """Runs SQL as the OS user's socket account; tab-separated rows, no header."""
        code, out, err = self._client(sql, database=database, check=False)
        if code != 0:
            raise LocalServerError(
                f"SQL failed on the private MariaDB: {err.strip()}",
                f"see the server log {self.log_file}",
            )
        return out.strip()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

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

    def _launch(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._chown(self.run_dir)
        self.pid_file.unlink(missing_ok=True)
        with self.log_file.open("ab") as log:
            self._chown(self.log_file)
            try:
                # A session of its own: Ctrl-C at the terminal must reach dbscale only. As root,
                # mariadbd switches to `user=` from my.cnf itself.
                self._process = subprocess.Popen(
                    [str(self.binaries.server), f"--defaults-file={self.cnf_file}"],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.base_dir,
                    start_new_session=True,
                )  # fmt: skip
            except OSError as exc:
                raise LocalServerError(f"mariadbd could not be run: {exc}") from None

    def _alive(self, pid: int) -> bool:
        if self._process is not None and self._process.pid == pid:
            return self._process.poll() is None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

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

    def _user_ids(self) -> tuple[int, int] | None:
        if self._os_user is None:
            return None
        entry = pwd.getpwnam(self._os_user)
        return entry.pw_uid, entry.pw_gid

    def _chown(self, *paths: Path) -> None:
        ids = self._user_ids()
        if ids is None:
            return
        for path in paths:
            os.chown(path, *ids)

    def _chown_tree(self) -> None:
        if self._os_user is None or not self.base_dir.exists():
            return
        for root, dirs, files in os.walk(self.base_dir):
            here = Path(root)
            self._chown(here, *(here / d for d in dirs), *(here / f for f in files))

    def _last_log_line(self) -> str:
        tail = [line for line in self.log_tail().splitlines() if line.strip()]
        errors = [line for line in tail if "[ERROR]" in line]
        return (errors or tail or ["no log output"])[-1]

    def _run(self, args: Sequence[str | Path], *, what: str) -> None:
        try:
            done = subprocess.run(
                [str(a) for a in args], capture_output=True, text=True, cwd=self.base_dir,
                check=False, timeout=300,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise LocalServerError(f"{what} could not be run: {exc}") from None
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise LocalServerError(
                f"{what} failed in {self.base_dir}: {detail[-1] if detail else done.returncode}",
                f"see the server log {self.log_file}",
            )
