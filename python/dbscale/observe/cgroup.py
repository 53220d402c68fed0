"""CPU limits of a process from its cgroup (v2 `cpu.max`, v1 `cpu.cfs_quota_us`) and the
throttling counters that show it hit them. A client confined to a fifth of a core never looks
busy in /proc/stat, but its cgroup says it was throttled; that is the evidence we want.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dbscale.observe.procfs import ProcFs


@dataclass(frozen=True)
class CgroupCpu:
    """Where a process's CPU cgroup lives and what it allows."""

    stat_file: Path
    quota_cores: float | None  # None: no quota on the way up to the root
    version: int


@dataclass(frozen=True)
class ThrottleCounters:
    periods: int
    throttled_periods: int
    throttled_s: float


def parse_cgroup_file(text: str) -> tuple[str | None, str | None]:
    """/proc/PID/cgroup: the v2 path (`0::/x`) and the v1 `cpu` controller's path."""
    v2 = v1_cpu = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            v2 = path
        elif "cpu" in controllers.split(","):
            v1_cpu = path
    return v2, v1_cpu


def parse_mountinfo(text: str) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """(root, mount point) of the cgroup2 mount and of the v1 mount holding `cpu`."""
    v2 = v1 = None
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3:
            continue
        root, mount_point, fstype, options = fields[3], fields[4], rfields[0], rfields[2]
        if fstype == "cgroup2" and v2 is None:
            v2 = (root, mount_point)
        elif fstype == "cgroup" and "cpu" in options.split(",") and v1 is None:
            v1 = (root, mount_point)
    return v2, v1


def parse_cpu_max(text: str) -> float | None:
    """v2 `cpu.max`: `max 100000` or `20000 100000` (quota, period in µs) → cores."""
    parts = text.split()
    if not parts or parts[0] == "max":
        return None
    period = int(parts[1]) if len(parts) > 1 else 100000
    return int(parts[0]) / period


def parse_throttling(text: str) -> ThrottleCounters:
    """`cpu.stat` of either version (v1 `throttled_time` ns, v2 `throttled_usec`)."""
    values = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().lstrip("-").isdigit():
            values[key] = int(value)
    throttled_s = (
        values["throttled_usec"] / 1e6
        if "throttled_usec" in values
        else values.get("throttled_time", 0) / 1e9
    )
    return ThrottleCounters(values.get("nr_periods", 0), values.get("nr_throttled", 0), throttled_s)


def _inside(mount: tuple[str, str], path: str) -> Path:
    root, mount_point = mount
    relative = path[len(root) :] if root != "/" and path.startswith(root) else path
    return Path(mount_point) / relative.lstrip("/")


def _ancestors(directory: Path, mount_point: Path) -> list[Path]:
    chain = [directory]
    while chain[-1] != mount_point and mount_point in chain[-1].parents:
        chain.append(chain[-1].parent)
    return chain


def cpu_cgroup(proc: ProcFs, pid: int | str = "self") -> CgroupCpu | None:
    """The process's CPU cgroup and its tightest quota, or None when none is visible."""
    cgroup_text, mountinfo = proc.read(f"{pid}/cgroup"), proc.read(f"{pid}/mountinfo")
    if not cgroup_text or not mountinfo:
        return None
    v2_path, v1_path = parse_cgroup_file(cgroup_text)
    v2_mount, v1_mount = parse_mountinfo(mountinfo)
    # A v1 cpu controller wins: in a hybrid layout the v2 tree holds no cpu controller.
    if v1_mount is not None and v1_path is not None:
        directory = _inside(v1_mount, v1_path)
        quotas = [_v1_quota(d) for d in _ancestors(directory, Path(v1_mount[1]))]
        return _result(directory, quotas, 1)
    if v2_mount is not None and v2_path is not None:
        directory = _inside(v2_mount, v2_path)
        quotas = [_read_quota(d / "cpu.max") for d in _ancestors(directory, Path(v2_mount[1]))]
        return _result(directory, quotas, 2)
    return None


def _result(directory: Path, quotas: list[float | None], version: int) -> CgroupCpu | None:
    if not (directory / "cpu.stat").is_file():
        return None
    limits = [q for q in quotas if q is not None]
    return CgroupCpu(directory / "cpu.stat", min(limits) if limits else None, version)


def _read_quota(path: Path) -> float | None:
    try:
        return parse_cpu_max(path.read_text())
    except (OSError, ValueError, IndexError):
        return None


def _v1_quota(directory: Path) -> float | None:
    try:
        quota = int((directory / "cpu.cfs_quota_us").read_text())
        period = int((directory / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def read_throttling(cgroup: CgroupCpu) -> ThrottleCounters | None:
    try:
        return parse_throttling(cgroup.stat_file.read_text())
    except OSError:
        return None
