"""A CPU budget in CPUs, fractions allowed (0.5 CPU): the cgroup `cpu` controller's quota per
period (v1 `cpu.cfs_quota_us`, v2 `cpu.max`). CPU sets confine a server to whole CPUs; a
cluster's nodes on a 2-core machine need halves, so their budget is a quota instead. Every
process of the server is moved in; the children it forks later follow it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dbscale.targets.local.confinement import CGROUP_PREFIX, OwnCgroup

PERIOD_US = 100_000
_V1 = Path("/sys/fs/cgroup/cpu")
_V2 = Path("/sys/fs/cgroup")


@dataclass
class CpuQuota(OwnCgroup):
    """A cgroup of our own whose processes together get at most `cpus` CPUs of time."""

    cpus: float
    version: int

    def describe(self) -> str:
        quota = int(self.cpus * PERIOD_US)
        file = "cpu.cfs_quota_us" if self.version == 1 else "cpu.max"
        return f"{self.cpus:g} CPU by cgroup v{self.version} {file} ({quota} us per {PERIOD_US} us)"


def make_cpu_quota(name: str, cpus: float) -> CpuQuota | str:
    """A quota cgroup of `cpus` CPUs, or why none could be made."""
    quota = max(int(cpus * PERIOD_US), 1000)
    tried = []
    if (_V1 / "cpu.cfs_quota_us").exists():
        path = _V1 / f"{CGROUP_PREFIX}{name}"
        try:
            path.mkdir(exist_ok=True)
            (path / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
            (path / "cpu.cfs_quota_us").write_text(f"{quota}\n")
            return CpuQuota(path, cpus, 1)
        except OSError as exc:
            tried.append(f"cgroup v1 cpu at {_V1}: {exc.strerror or exc}")
    if (_V2 / "cgroup.controllers").exists():
        try:
            if "cpu" not in (_V2 / "cgroup.controllers").read_text().split():
                raise OSError(0, "no cpu controller")
            parent = _V2 / "dbscale"
            parent.mkdir(exist_ok=True)
            for level in (_V2, parent):
                if "cpu" not in (level / "cgroup.subtree_control").read_text().split():
                    (level / "cgroup.subtree_control").write_text("+cpu\n")
            path = parent / name
            path.mkdir(exist_ok=True)
            (path / "cpu.max").write_text(f"{quota} {PERIOD_US}\n")
            return CpuQuota(path, cpus, 2)
        except OSError as exc:
            tried.append(f"cgroup v2 cpu.max: {exc.strerror or exc}")
    return "; ".join(tried) or "no cgroup cpu controller mounted"
