"""Confining a local server to N CPUs and a memory budget, the way a cloud instance size would.

CPUs: the postmaster is started from a thread whose affinity is the chosen CPUs, so it is born
confined and every backend it forks inherits the mask; the processes already forked when it is
up are set once more, and the masks are read back from /proc/PID/status as evidence.
Memory: a cgroup with `memory.max` (v2) or `memory.limit_in_bytes` (v1) when one can be made;
the server's processes join it and backends inherit it. Without a writable memory controller the
budget only sizes the settings (shared_buffers, work_mem, ...) and the record says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from dbscale.errors import ConfigError
from dbscale.values import parse_cpu_list

CGROUP_PREFIX = "dbscale-"


def format_cpu_list(cpus: set[int] | frozenset[int] | tuple[int, ...]) -> str:
    """{0, 1, 2, 5} -> `0-2,5` (the kernel's Cpus_allowed_list form)."""
    ordered = sorted(cpus)
    ranges: list[str] = []
    start = prev = None
    for cpu in [*ordered, None]:
        if cpu is not None and prev is not None and cpu == prev + 1:
            prev = cpu
            continue
        if start is not None:
            ranges.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = cpu
    return ",".join(ranges)


def choose_cpus(vcpus: int, explicit: str | None, available: set[int]) -> tuple[int, ...]:
    """The CPUs a local server of `vcpus` gets: `explicit`, or the first `vcpus` of `available`
    (the CPUs dbscale itself may use)."""
    if explicit is not None:
        chosen = set(parse_cpu_list(explicit))
        missing = chosen - available
        if missing:
            raise ConfigError(
                f"local.cpus {explicit} names CPUs dbscale may not use: {format_cpu_list(missing)}",
                f"this process may use CPUs {format_cpu_list(available)}",
            )
        if len(chosen) != vcpus:
            raise ConfigError(f"local.cpus {explicit} holds {len(chosen)} CPUs, vcpus says {vcpus}")
        return tuple(sorted(chosen))
    if vcpus > len(available):
        raise ConfigError(
            f"a local target of {vcpus} vCPUs needs {vcpus} CPUs; this machine lets dbscale use "
            f"{len(available)} ({format_cpu_list(available)})",
            "lower `vcpus`, or run on a larger machine",
        )
    return tuple(sorted(available)[:vcpus])


@contextmanager
def thread_affinity(cpus: tuple[int, ...]) -> Iterator[None]:
    """Confines the calling thread (only it: pid 0 means this thread on Linux) for the block;
    processes it starts inherit the mask."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


@dataclass(frozen=True)
class ProcessCpus:
    """Evidence: one server process and the CPUs the kernel lets it run on."""

    pid: int
    name: str
    cpus_allowed_list: str


def process_tree(root: int, proc: Path = Path("/proc")) -> list[int]:
    """`root` and its descendants, from each /proc/PID/stat's parent pid."""
    children: dict[int, list[int]] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def confine_tree(root: int, cpus: tuple[int, ...]) -> list[ProcessCpus]:
    """Sets the mask of every thread of `root` and its descendants; returns what the kernel
    reports for each afterwards."""
    for pid in process_tree(root):
        try:
            tasks = [int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()]
        except OSError:
            continue
        for tid in tasks:
            try:
                os.sched_setaffinity(tid, cpus)
            except (ProcessLookupError, PermissionError):
                continue
    return read_affinity(root)


def read_affinity(root: int) -> list[ProcessCpus]:
    evidence = []
    for pid in process_tree(root):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        allowed = fields.get("Cpus_allowed_list", "?").strip()
        evidence.append(ProcessCpus(pid, _title(pid) or fields.get("Name", "?").strip(), allowed))
    return evidence


def _title(pid: int) -> str:
    """The process title (`postgres: checkpointer`), as ps shows it."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


# -- memory --------------------------------------------------------------------------------


@dataclass
class OwnCgroup:
    """A cgroup dbscale made for one server: processes are moved in, and it is removed after."""

    path: Path

    def add(self, pids: list[int]) -> list[int]:
        """Moves `pids` in; returns those that moved."""
        moved = []
        for pid in pids:
            try:
                (self.path / "cgroup.procs").write_text(f"{pid}\n")
                moved.append(pid)
            except OSError:
                continue
        return moved

    def remove(self) -> None:
        """Removes the cgroup once its processes are gone (best effort)."""
        with suppress(OSError):
            self.path.rmdir()


@dataclass
class MemoryCgroup(OwnCgroup):
    """A memory cgroup of our own for one server (v2 or v1)."""

    version: int
    limit_bytes: int

    @property
    def limit_file(self) -> str:
        return "memory.max" if self.version == 2 else "memory.limit_in_bytes"


@dataclass
class MemoryPlacement:
    """Where a memory budget is enforced, or why it is not."""

    cgroup: MemoryCgroup | None
    reason: str  # how it is enforced, or why it could not be
    tried: list[str] = field(default_factory=list)


def make_memory_cgroup(
    name: str, limit_bytes: int, mountinfo: Path | None = None
) -> MemoryPlacement:
    """A cgroup limited to `limit_bytes`: v2 if its memory controller can be delegated to a new
    child of the cgroup2 mount, else v1's memory hierarchy, else none (with the reasons)."""
    v2_mount, v1_mount = _cgroup_mounts(mountinfo or Path("/proc/self/mountinfo"))
    tried: list[str] = []
    for mount, make, how in (
        (v2_mount, _make_v2, "cgroup v2 memory.max"),
        (v1_mount, _make_v1, "cgroup v1 memory.limit_in_bytes"),
    ):
        if mount is None:
            continue
        try:
            return MemoryPlacement(make(mount, name, limit_bytes), how, tried)
        except OSError as exc:
            tried.append(f"{how.rsplit(' ', 1)[0]} at {mount}: {exc.strerror or exc}")
    if v2_mount is None and v1_mount is None:
        tried.append("no cgroup filesystem mounted")
    return MemoryPlacement(None, "no writable cgroup memory controller", tried)


def _cgroup_mounts(mountinfo: Path) -> tuple[Path | None, Path | None]:
    v2 = v1 = None
    try:
        text = mountinfo.read_text()
    except OSError:
        return None, None
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3:
            continue
        if rfields[0] == "cgroup2" and v2 is None:
            v2 = Path(fields[4])
        elif rfields[0] == "cgroup" and "memory" in rfields[2].split(",") and v1 is None:
            v1 = Path(fields[4])
    return v2, v1


def _make_v2(mount: Path, name: str, limit_bytes: int) -> MemoryCgroup:
    if "memory" not in (mount / "cgroup.controllers").read_text().split():
        raise OSError(0, "the memory controller is not available in cgroup v2 here")
    parent = mount / "dbscale"
    parent.mkdir(exist_ok=True)
    if "memory" not in (mount / "cgroup.subtree_control").read_text().split():
        (mount / "cgroup.subtree_control").write_text("+memory\n")
    if "memory" not in (parent / "cgroup.subtree_control").read_text().split():
        (parent / "cgroup.subtree_control").write_text("+memory\n")
    path = parent / name
    path.mkdir(exist_ok=True)
    (path / "memory.max").write_text(f"{limit_bytes}\n")
    if (path / "memory.swap.max").exists():  # a budget, not a budget plus swap
        (path / "memory.swap.max").write_text("0\n")
    return MemoryCgroup(path, 2, limit_bytes)


def _make_v1(mount: Path, name: str, limit_bytes: int) -> MemoryCgroup:
    path = mount / f"{CGROUP_PREFIX}{name}"
    path.mkdir(exist_ok=True)
    (path / "memory.limit_in_bytes").write_text(f"{limit_bytes}\n")
    with suppress(OSError):  # pages the server touched before it joined follow it in
        (path / "memory.move_charge_at_immigrate").write_text("3\n")
    return MemoryCgroup(path, 1, limit_bytes)


def memory_cgroup_of(pid: int) -> str | None:
    """The memory cgroup path of `pid` (v1 `memory` line, else the v2 line)."""
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return None
    v2 = None
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return path
        if controllers == "":
            v2 = path
    return v2
