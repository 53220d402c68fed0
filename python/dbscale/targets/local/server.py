"""What every private server dbscale starts has in common: its own directory (data, run and TLS
subdirectories, a log kept across starts), a port found free at start, the OS user it runs as
when we are root (and owns the directory), a start that retries on a port taken meanwhile, a
session of its own (Ctrl-C at the terminal must reach dbscale, not the server), and a `with`
block that stops the server only when this object started it. `LocalPostgres` and
`LocalMariaDB` fill in how their engine initializes, starts, answers and stops.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import weakref
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, Self, TypeVar
from urllib.parse import quote

from dbscale.errors import LocalServerError
from dbscale.targets.local.processes import (
    ServerUsers,
    clear_owner,
    dead_owner,
    kill_tree,
    mark_owner,
    owner_noted,
    wake,
)
from dbscale.targets.tls import TlsFiles

SettingValue = str | int | float | bool
Binaries = TypeVar("Binaries")
START_ATTEMPTS = 3  # a free port can be taken between choosing it and binding it
# The servers this process started and has not stopped yet (what an interrupt may leave).
_STARTED: weakref.WeakSet[LocalServer[Any]] = weakref.WeakSet()


def still_running() -> list[str]:
    """The servers this process started that still run: each as `TITLE (pid N) in DIR`."""
    found = []
    for server in list(_STARTED):
        pid = server.running_pid()
        if pid is not None:
            found.append(f"{server.title} (pid {pid}) in {server.base_dir}")
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer(ABC, Generic[Binaries]):
    """One private server in `base_dir`. `with Server(dir) as server:` initializes it if needed,
    starts it unless it already runs, and stops it afterwards only if this object started it."""

    engine: ClassVar[str]  # "postgresql" or "mariadb", as targets name them
    title: ClassVar[str]  # "PostgreSQL" or "MariaDB", for messages
    runs_as_when_root: ClassVar[str]
    default_settings: ClassVar[Mapping[str, SettingValue]]
    log_name: ClassVar[str]
    # The server's URLs, with {port} and {run_dir} (the socket directory, URL-quoted) to fill in:
    # the administrator over TCP (no password) and over the socket, a user with a password.
    url_form: ClassVar[str]
    socket_url_form: ClassVar[str]
    password_url_form: ClassVar[str]

    def __init__(
        self,
        base_dir: Path,
        *,
        port: int | None = None,
        settings: Mapping[str, SettingValue] | None = None,
        binaries: Binaries | None = None,
        start_timeout_s: float = 60.0,
    ) -> None:
        self.base_dir = base_dir.absolute()
        self._binaries = binaries
        self.data_dir = self.base_dir / "data"
        self.run_dir = self.base_dir / "run"
        self.tls = TlsFiles.in_dir(self.base_dir / "tls")
        self.log_file = self.base_dir / self.log_name
        self.settings: dict[str, SettingValue] = {**self.default_settings, **(settings or {})}
        self._fixed_port = port
        self._port: int | None = port
        self._start_timeout_s = start_timeout_s
        self._started_here = False
        self._os_user = self.runs_as_when_root if os.geteuid() == 0 else None
        self.reaped_from: int | None = None  # the gone dbscale whose orphan start() stopped
        self.stop_note: str | None = None  # a stop that had to kill the server says so here
        self.shared = False  # start() found it running: another process's too
        self._users = ServerUsers(self.run_dir)

    # -- what each engine does -------------------------------------------------------------------

    @abstractmethod
    def _find_binaries(self) -> Binaries:
        """The engine's installed programs; `LocalServerError` saying how to install them."""

    @abstractmethod
    def is_initialized(self) -> bool: ...

    @abstractmethod
    def init(self) -> None:
        """Creates the data directory (once) and the TLS files."""

    @abstractmethod
    def running_pid(self) -> int | None:
        """The pid of a server running on our data directory."""

    @abstractmethod
    def running_port(self) -> int | None:
        """The port of a server running on our data directory."""

    @abstractmethod
    def _launch(self, port: int) -> None:
        """Starts the server on `port` and returns once it answers; `LocalServerError` if not."""

    @abstractmethod
    def _bootstrap(self) -> None:
        """Accounts and databases, after each start (idempotent)."""

    @abstractmethod
    def _shut_down(self, pid: int, timeout_s: float) -> None:
        """Stops the running server `pid` cleanly and waits until it is gone."""

    @abstractmethod
    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Returns once the server answers, else `LocalServerError`."""

    def _tool_env(self) -> dict[str, str]:
        """The environment of the engine's own programs."""
        return dict(os.environ)

    # -- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise LocalServerError(
                f"the {self.title} server in {self.base_dir} has not been started"
            )
        return self._port

    @property
    def url(self) -> str:
        return self._fill(self.url_form)

    @property
    def socket_url(self) -> str:
        return self._fill(self.socket_url_form)

    @property
    def password_url(self) -> str:
        return self._fill(self.password_url_form)

    def _fill(self, form: str) -> str:
        return form.format(port=self.port, run_dir=quote(str(self.run_dir)))

    @property
    def binaries(self) -> Binaries:
        if self._binaries is None:
            self._binaries = self._find_binaries()
        return self._binaries

    @property
    def socket_dir(self) -> Path:
        return self.run_dir

    @property
    def ca_file(self) -> Path:
        return self.tls.ca_cert

    # -- lifecycle ---------------------------------------------------------------------------

    def status(self) -> str:
        if not self.is_initialized():
            return "uninitialized"
        return "running" if self.running_pid() is not None else "stopped"

    def start(self) -> bool:
        """Starts the server unless it already runs; True if this call started it. A server
        left running by a dbscale process that is gone (killed before it could stop it) is
        stopped and started anew as this process's: it is an orphan, not someone's server."""
        self.init()
        in_use = self._users.others_present()  # another dbscale uses it: never an orphan
        running = self.running_pid() is not None
        orphaned_by = dead_owner(self.run_dir) if running and not in_use else None
        if orphaned_by is not None:
            self.reaped_from = orphaned_by
            self.stop()
        running_port = self.running_port()
        if running_port is not None:
            self._port = running_port
            self.wait_ready()
            self._users.join()
            self.shared = True
            return False
        attempts = 1 if self._fixed_port is not None else START_ATTEMPTS
        for attempt in range(1, attempts + 1):
            self._started_here = True  # from here on, __exit__ (or a failure) must stop it
            _STARTED.add(self)
            mark_owner(self.run_dir)
            self._port = self._fixed_port or free_port()
            try:
                self._launch(self._port)
                break
            except LocalServerError:
                port_taken = "bind" in self.log_tail().lower()
                self.stop()
                if attempt == attempts or not port_taken:
                    raise
        self._bootstrap()
        self._users.join()
        return True

    def release(self) -> None:
        """This process is done with the server: the last process using it stops it if a
        dbscale started it (this one or one gone before); while others still use it, it stays
        running for them, whoever started it."""
        last = self._users.leave()
        if last and (self._started_here or owner_noted(self.run_dir)):
            self.stop()
        elif self._started_here:  # theirs now: the last of them stops it
            self._started_here = False
            _STARTED.discard(self)

    def keep_port(self) -> None:
        """Later starts take this start's port (a cluster's node keeps its address)."""
        self._fixed_port = self.port

    def stop(self, timeout_s: float = 60.0) -> None:
        """Stops the server if it runs: woken first (a frozen server handles no shutdown),
        then a clean shutdown within `timeout_s`, else killed. An interrupt meanwhile kills it
        at once (and is raised after): a stop never leaves a server behind."""
        pid = self.running_pid()
        try:
            if pid is not None:
                wake(pid)
                try:
                    self._shut_down(pid, timeout_s)
                except LocalServerError as exc:
                    if not self._killed(pid):
                        raise
                    self.stop_note = f"{exc.message}; killed instead"
        except KeyboardInterrupt:
            if pid is not None:
                self._killed(pid)
            raise
        finally:
            if self.running_pid() is None:
                _STARTED.discard(self)
                clear_owner(self.run_dir)
        self._started_here = False

    def kill(self) -> None:
        """The server dies at once (a fault step): SIGKILL to every process of it."""
        pid = self.running_pid()
        if pid is not None:
            self._killed(pid)

    def _killed(self, pid: int) -> bool:
        """SIGKILL to the server's process tree; True once it is gone. What a killed server
        leaves behind (lock files naming it) goes too."""
        gone = kill_tree(pid)
        if gone:
            self._after_kill()
        return gone

    def _after_kill(self) -> None:
        """What an engine clears after its server was killed (PostgreSQL: stale lock files)."""

    def destroy(self) -> None:
        """Stops the server and removes the data, TLS and run directories (the log stays)."""
        self.stop()
        for path in (self.data_dir, self.tls.ca_cert.parent, self.run_dir):
            shutil.rmtree(path, ignore_errors=True)

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            if self._started_here:  # interrupted or failed half-way: leave nothing running
                self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # -- for the engines -----------------------------------------------------------------------

    def _make_base_dir(self) -> None:
        """The server's directory, owned by its OS user, who must be able to reach it: as root
        the server runs as another user, and a directory under a private one (root's home, a
        test's temporary directory) fails later with less clear words."""
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self._chown_tree()
        ids = self._user_ids()
        if ids is not None:
            probe = subprocess.run(
                ["test", "-w", str(self.base_dir)], user=ids[0], group=ids[1], extra_groups=[],
                check=False,
            )  # fmt: skip
            if probe.returncode != 0:
                raise LocalServerError(
                    f"the {self._os_user} OS user cannot write {self.base_dir}",
                    f"{self.title} runs as {self._os_user} when dbscale runs as root; choose a "
                    "directory every user can reach (e.g. under /var/tmp)",
                )

    def _last_log_line(self) -> str:
        """The log's last error line, else its last line."""
        tail = [line for line in self.log_tail().splitlines() if line.strip()]
        errors = [line for line in tail if "ERROR" in line or "FATAL" in line]
        return (errors or tail or ["no log output"])[-1]

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

    def _run(
        self,
        args: Sequence[str | Path],
        *,
        what: str,
        as_server_user: bool = False,
        check: bool = True,
        new_session: bool = False,
        timeout_s: float = 300.0,
    ) -> subprocess.CompletedProcess[str]:
        """Runs one of the engine's programs in `base_dir`; `LocalServerError` when it cannot
        run, or (with `check`) fails."""
        ids = self._user_ids() if as_server_user else None
        try:
            done = subprocess.run(
                [str(a) for a in args], capture_output=True, text=True, cwd=self.base_dir,
                env=self._tool_env(), user=ids[0] if ids else None,
                group=ids[1] if ids else None, extra_groups=[] if ids else None,
                start_new_session=new_session, check=False, timeout=timeout_s,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise LocalServerError(f"{what} could not be run: {exc}") from None
        if check and done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise LocalServerError(
                f"{what} failed in {self.base_dir}: {detail[-1] if detail else done.returncode}",
                f"see the server log {self.log_file}",
            )
        return done

    def _failed_to_start(self, detail: str) -> LocalServerError:
        return LocalServerError(
            f"{self.title} in {self.data_dir} did not start: {detail}",
            f"see the server log {self.log_file}",
        )


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (owned by us or not) and has not died: a zombie its
    parent has yet to reap (a killed server's, under a container's init) is dead.
    `-pgid`: any of a process group."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by someone else
    if pid > 0:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        return state not in ("Z", "X")
    return True
