"""The processes of a private server, as dbscale deals with them when a clean stop will not do:
a whole process tree woken (a SIGSTOPped server cannot shut down) or killed, and the mark a
server's directory keeps of the dbscale process that started it, so a server left running by a
dbscale that was itself killed (SIGKILL, an OOM kill, a lost terminal) is found and stopped at
the next start instead of being taken for someone else's."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
from pathlib import Path

from dbscale.polling import poll_until
from dbscale.targets.local.confinement import process_tree

OWNER_FILE = "dbscale.owner"  # in the server's run directory: "<pid> <start time in ticks>"


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not); a child of ours that died is reaped on the way."""
    with contextlib.suppress(ChildProcessError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def signal_tree(root: int, sig: signal.Signals) -> list[int]:
    """Sends `sig` to `root` and its descendants; the pids it reached."""
    reached = []
    for pid in process_tree(root) or [root]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
            reached.append(pid)
    return reached


def wake(root: int) -> None:
    """SIGCONT to a server's processes: a stopped (frozen) server handles no shutdown request."""
    signal_tree(root, signal.SIGCONT)


def kill_tree(root: int, wait_s: float = 10.0) -> bool:
    """SIGKILL to `root` and its descendants (a stopped process dies too); True once all are
    gone within `wait_s`."""
    pids = signal_tree(root, signal.SIGKILL)
    return bool(poll_until(lambda: not any(_alive(p) for p in pids), wait_s, 0.005))


def _start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks since boot): a pid reused later has another."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def mark_owner(run_dir: Path) -> None:
    """Notes this process as the one that started the server in `run_dir`."""
    with contextlib.suppress(OSError):
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / OWNER_FILE).write_text(f"{os.getpid()} {_start_ticks(os.getpid()) or 0}\n")


def clear_owner(run_dir: Path) -> None:
    with contextlib.suppress(OSError):
        (run_dir / OWNER_FILE).unlink()


def owner_noted(run_dir: Path) -> bool:
    """Whether a dbscale process noted itself as the one that started the server."""
    return (run_dir / OWNER_FILE).is_file()


def dead_owner(run_dir: Path) -> int | None:
    """The pid of the dbscale process that started the server in `run_dir`, when that process
    is gone (the server is then an orphan); None when it still runs or nothing is noted."""
    try:
        pid_text, ticks_text = (run_dir / OWNER_FILE).read_text().split()[:2]
        pid, ticks = int(pid_text), int(ticks_text)
    except (OSError, ValueError):
        return None
    if pid == os.getpid():
        return None
    alive = _alive(pid) and _start_ticks(pid) in (ticks, None)
    return None if alive else pid


USERS_FILE = "users.lock"


class ServerUsers:
    """The dbscale processes using the server of `run_dir`, each holding a shared lock on one
    file while it does: a process that started the server leaves it running while others still
    use it, the last one out stops it, and a server some process uses is never taken for an
    orphan."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / USERS_FILE
        self._fd: int | None = None

    def others_present(self) -> bool:
        """Whether another process holds the lock (asked before `join`: a joined process would
        count itself)."""
        try:
            fd = self._open()
        except OSError:
            return False
        try:
            return not self._exclusive_free(fd)
        finally:
            os.close(fd)

    def join(self) -> None:
        if self._fd is not None:
            return
        with contextlib.suppress(OSError):
            fd = self._open()
            fcntl.flock(fd, fcntl.LOCK_SH)
            self._fd = fd

    def leave(self) -> bool:
        """Stops using the server; True when no other process uses it."""
        if self._fd is None:
            return not self.others_present()
        fd, self._fd = self._fd, None
        try:
            return self._exclusive_free(fd)
        finally:
            os.close(fd)  # the lock goes with the descriptor

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)

    @staticmethod
    def _exclusive_free(fd: int) -> bool:
        """Whether `fd` can take the lock alone (then left holding it shared; a failed try may
        drop the shared lock it held, so it is asked only by `leave` and before `join`)."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(fd, fcntl.LOCK_SH)
        return True
