"""Parsers for the Linux /proc files observation reads, and one reader that finds them.

Parsers take the file's text and return plain numbers, so unit tests feed them captured fixtures;
`ProcFs` only knows where the files are (a different root in tests) and turns a vanished process
or a refused read into `None`: processes come and go while we sample, and that is not an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# /proc/stat "cpu" columns, in the kernel's order (guest time is already inside user/nice).
CPU_STATES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
TCP_LISTEN = "0A"


@dataclass(frozen=True)
class HostCpuTimes:
    """/proc/stat: clock ticks per CPU state, summed (`total`) and per CPU, plus counters."""

    total: dict[str, int]
    per_cpu: list[dict[str, int]]
    ctxt: int
    procs_running: int
    procs_blocked: int


@dataclass(frozen=True)
class PidStat:
    """The fields of /proc/PID/stat (or /proc/PID/task/TID/stat) observation uses."""

    pid: int
    comm: str
    state: str
    ppid: int
    utime: int  # clock ticks
    stime: int
    cutime: int  # reaped children, ticks
    cstime: int
    num_threads: int
    starttime: int  # ticks after boot


@dataclass(frozen=True)
class SchedStat:
    """/proc/PID/schedstat: time on a CPU, time runnable but waiting for one, timeslices."""

    run_ns: int
    wait_ns: int
    slices: int


@dataclass(frozen=True)
class NetCounters:
    rx_bytes: int
    rx_packets: int
    tx_bytes: int
    tx_packets: int


def parse_proc_stat(text: str) -> HostCpuTimes:
    total: dict[str, int] = {}
    per_cpu: list[dict[str, int]] = []
    counters = {"ctxt": 0, "procs_running": 0, "procs_blocked": 0}
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        key = parts[0]
        if key.startswith("cpu"):
            values = [int(v) for v in parts[1 : 1 + len(CPU_STATES)]]
            values += [0] * (len(CPU_STATES) - len(values))
            states = dict(zip(CPU_STATES, values, strict=True))
            if key == "cpu":
                total = states
            else:
                per_cpu.append(states)
        elif key in counters and len(parts) > 1:
            counters[key] = int(parts[1])
    return HostCpuTimes(total, per_cpu, **counters)


def parse_pid_stat(text: str) -> PidStat:
    """`comm` may hold spaces and parentheses: the fields after it follow the last ')'."""
    head, _, rest = text.rpartition(")")
    pid_text, _, comm = head.partition(" (")
    fields = rest.split()
    # fields[0] is field 3 (state) of proc(5); field n is fields[n - 3].
    return PidStat(
        pid=int(pid_text),
        comm=comm,
        state=fields[0],
        ppid=int(fields[1]),
        utime=int(fields[11]),
        stime=int(fields[12]),
        cutime=int(fields[13]),
        cstime=int(fields[14]),
        num_threads=int(fields[17]),
        starttime=int(fields[19]),
    )


def parse_schedstat(text: str) -> SchedStat:
    parts = text.split()
    return SchedStat(int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) > 2 else 0)


def parse_key_values(text: str, sep: str = ":") -> dict[str, str]:
    """`key: value` lines (/proc/PID/io, /proc/PID/status, /proc/meminfo)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, found, value = line.partition(sep)
        if found:
            out[key.strip()] = value.strip()
    return out


def parse_pid_io(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in parse_key_values(text).items() if v.isdigit()}


def parse_meminfo_kib(text: str) -> dict[str, int]:
    """/proc/meminfo values in KiB (`MemTotal: 24684092 kB`); counts like HugePages_Total too."""
    out: dict[str, int] = {}
    for key, value in parse_key_values(text).items():
        number = value.split()[0] if value else ""
        if number.isdigit():
            out[key] = int(number)
    return out


def parse_net_dev(text: str) -> dict[str, NetCounters]:
    out: dict[str, NetCounters] = {}
    for line in text.splitlines()[2:]:
        name, found, rest = line.partition(":")
        if not found:
            continue
        values = rest.split()
        if len(values) < 10:
            continue
        out[name.strip()] = NetCounters(
            rx_bytes=int(values[0]),
            rx_packets=int(values[1]),
            tx_bytes=int(values[8]),
            tx_packets=int(values[9]),
        )
    return out


def parse_cpuinfo_mhz(text: str) -> list[float]:
    """The `cpu MHz` line of every CPU in /proc/cpuinfo (x86; other architectures lack it)."""
    out: list[float] = []
    for line in text.splitlines():
        if line.startswith("cpu MHz"):
            _, _, value = line.partition(":")
            try:
                out.append(float(value))
            except ValueError:
                continue
    return out


def parse_listening_inodes(text: str, port: int) -> set[int]:
    """Socket inodes listening on `port` in /proc/net/tcp or tcp6."""
    inodes: set[int] = set()
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 10 or parts[3] != TCP_LISTEN:
            continue
        _, _, port_hex = parts[1].rpartition(":")
        if int(port_hex, 16) == port:
            inodes.add(int(parts[9]))
    return inodes


def parse_unix_inodes(text: str, path: str) -> set[int]:
    """Inodes of Unix sockets bound to `path` in /proc/net/unix."""
    inodes: set[int] = set()
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 8 and parts[7] == path:
            inodes.add(int(parts[6]))
    return inodes


class ProcFs:
    """Reads /proc (or a copy of it under `root`); a missing or unreadable file is `None`."""

    def __init__(self, root: Path = Path("/proc")) -> None:
        self.root = root

    def read(self, relative: str) -> str | None:
        try:
            with (self.root / relative).open(encoding="utf-8", errors="replace") as f:
                return f.read()
        except (OSError, ValueError):
            return None

    def host_cpu(self) -> HostCpuTimes | None:
        text = self.read("stat")
        return parse_proc_stat(text) if text else None

    def pid_stat(self, pid: int, tid: int | None = None) -> PidStat | None:
        text = self.read(f"{pid}/task/{tid}/stat" if tid else f"{pid}/stat")
        return _parsed(parse_pid_stat, text)

    def schedstat(self, pid: int, tid: int | None = None) -> SchedStat | None:
        text = self.read(f"{pid}/task/{tid}/schedstat" if tid else f"{pid}/schedstat")
        return _parsed(parse_schedstat, text)

    def pid_io(self, pid: int) -> dict[str, int] | None:
        text = self.read(f"{pid}/io")
        return parse_pid_io(text) if text else None

    def pid_status(self, pid: int) -> dict[str, str] | None:
        text = self.read(f"{pid}/status")
        return parse_key_values(text) if text else None

    def thread_ids(self, pid: int) -> list[int]:
        return _numeric_entries(self.root / str(pid) / "task")

    def children(self, pid: int) -> list[int]:
        """Direct children of every thread of `pid` (/proc/PID/task/TID/children)."""
        out: list[int] = []
        for tid in self.thread_ids(pid):
            text = self.read(f"{pid}/task/{tid}/children")
            if text:
                out.extend(int(c) for c in text.split())
        return out

    def descendants(self, pid: int) -> list[int]:
        """`pid` and every process below it."""
        seen = [pid]
        index = 0
        while index < len(seen):
            seen.extend(c for c in self.children(seen[index]) if c not in seen)
            index += 1
        return seen

    def net_dev(self) -> dict[str, NetCounters]:
        text = self.read("net/dev")
        return parse_net_dev(text) if text else {}

    def pids(self) -> Iterator[int]:
        yield from _numeric_entries(self.root)

    def socket_inodes(self, pid: int) -> set[int]:
        """Inodes of the sockets `pid` holds open (needs the right to read its fds)."""
        inodes: set[int] = set()
        fd_dir = self.root / str(pid) / "fd"
        try:
            entries = list(fd_dir.iterdir())
        except OSError:
            return inodes
        for entry in entries:
            try:
                target = str(entry.readlink())
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(int(target[8:-1]))
        return inodes


def _parsed(parse: Callable[[str], T], text: str | None) -> T | None:
    if not text:
        return None
    try:
        return parse(text)
    except (ValueError, IndexError):
        return None


def _numeric_entries(directory: Path) -> list[int]:
    try:
        return [int(p.name) for p in directory.iterdir() if p.name.isdigit()]
    except OSError:
        return []
