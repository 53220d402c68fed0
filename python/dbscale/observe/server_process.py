"""The database server's processes when it runs on this machine: found from the target's port or
socket (the process holding the listening socket), or for PostgreSQL from the session's backend
pid; then every second the CPU and I/O of the whole process tree.

The tree's CPU is each live process's own time plus what its reaped children left in its
`cutime`/`cstime`, so backends that come and go (per-transaction connections) are counted.
Reaped children's I/O likewise lands in the parent's /proc/PID/io.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbscale.observe.procfs import (
    ProcFs,
    parse_listening_inodes,
    parse_unix_inodes,
)
from dbscale.targets.url import Endpoint, is_local_host
from dbscale.values import parse_cpu_list

SERVER_COMMANDS = frozenset({"postgres", "postmaster", "mysqld", "mariadbd"})


def find_listener(proc: ProcFs, endpoint: Endpoint) -> int | None:
    """The pid holding the target's listening socket (needs to read other processes' fds)."""
    if not is_local_host(endpoint.host):
        return None
    inodes: set[int] = set()
    path = endpoint.unix_socket
    if path is not None:
        inodes |= parse_unix_inodes(proc.read("net/unix") or "", path)
    else:
        for table in ("net/tcp", "net/tcp6"):
            inodes |= parse_listening_inodes(proc.read(table) or "", endpoint.port)
    if not inodes:
        return None
    for pid in proc.pids():
        if proc.socket_inodes(pid) & inodes:
            return _topmost_server(proc, pid)
    return None


def postmaster_of_backend(proc: ProcFs, endpoint: Endpoint, backend_pid: int) -> int | None:
    """PostgreSQL without the right to read fds: the session's backend's parent."""
    if not is_local_host(endpoint.host):
        return None
    backend = proc.pid_stat(backend_pid)
    if backend is None or backend.comm not in SERVER_COMMANDS:
        return None
    parent = proc.pid_stat(backend.ppid)
    return parent.pid if parent is not None and parent.comm in SERVER_COMMANDS else None


def _topmost_server(proc: ProcFs, pid: int) -> int:
    """A listener's pid, or its server-named parent (a forked listener child)."""
    current = proc.pid_stat(pid)
    while current is not None and current.ppid > 1:
        parent = proc.pid_stat(current.ppid)
        if parent is None or parent.comm not in SERVER_COMMANDS:
            break
        current = parent
    return current.pid if current is not None else pid


@dataclass(frozen=True)
class ServerTimes:
    """One reading of the server's process tree. Run-queue times are kept per thread id: a
    backend that exits takes its schedstat with it, so only threads seen twice give a delta."""

    user_ticks: int
    system_ticks: int
    read_bytes: int
    write_bytes: int
    processes: int
    io_readable: bool
    sched: dict[int, tuple[int, int]]  # tid -> (run_ns, wait_ns)


def read_server_times(
    proc: ProcFs, root_pid: int, pooler_pid: int | None = None, more_roots: tuple[int, ...] = ()
) -> ServerTimes | None:
    """CPU (own + reaped children), run-queue wait and I/O of `root_pid` and its descendants,
    of the pooler in front of it (a local target's PgBouncer) when there is one, and of a local
    cluster's other nodes (`more_roots`)."""
    user = system = read = write = count = 0
    io_readable = True
    sched: dict[int, tuple[int, int]] = {}
    pids = list(proc.descendants(root_pid))
    for other in (pooler_pid, *more_roots):
        if other is not None:
            pids.extend(proc.descendants(other))
    for pid in pids:
        stat = proc.pid_stat(pid)
        if stat is None:
            if pid == root_pid:
                return None
            continue
        count += 1
        user += stat.utime + stat.cutime
        system += stat.stime + stat.cstime
        for tid in proc.thread_ids(pid) if stat.num_threads > 1 else [pid]:
            times = proc.schedstat(pid, tid)
            if times is not None:
                sched[tid] = (times.run_ns, times.wait_ns)
        io = proc.pid_io(pid)
        if io is None:
            io_readable = False
        else:
            read += io.get("read_bytes", 0)
            write += io.get("write_bytes", 0)
    return ServerTimes(user, system, read, write, count, io_readable, sched)


def allowed_cpus(proc: ProcFs, pid: int) -> int | None:
    """How many CPUs the process may run on (its affinity)."""
    status = proc.pid_status(pid)
    if not status or "Cpus_allowed_list" not in status:
        return None
    return len(parse_cpu_list(status["Cpus_allowed_list"])) or None
