"""Confining a test's client to a fraction of one core: a fresh cgroup with a CPU quota (v2
`cpu.max`, or v1 `cpu.cfs_quota_us` on hybrid hosts such as this project's CI VM), entered by a
`sh` wrapper before it execs the command, so every thread the command starts is confined.
Needs a writable cpu controller (root, or a delegated subtree); `None` otherwise.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dbscale.observe.cgroup import parse_mountinfo

PERIOD_US = 100_000
ENTER = 'echo $$ > "$0/cgroup.procs" && exec "$@"'


def _v2_dir(mount: Path) -> Path | None:
    """The v2 root when its children get the cpu controller (not switched on here: that would
    change the host's setup for everyone)."""
    try:
        enabled = (mount / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return mount if "cpu" in enabled else None


def _make(cores: float) -> Path | None:
    mountinfo = Path("/proc/self/mountinfo").read_text()
    v2, v1 = parse_mountinfo(mountinfo)
    name = f"dbscale-test-{uuid.uuid4().hex[:8]}"
    quota = int(cores * PERIOD_US)
    parent = _v2_dir(Path(v2[1])) if v2 is not None else None
    try:
        if parent is not None:
            group = parent / name
            group.mkdir()
            (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
            return group
        if v1 is not None:
            group = Path(v1[1]) / name
            group.mkdir()
            (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(quota))
            return group
    except OSError:
        return None
    return None


@contextmanager
def cpu_quota(cores: float) -> Iterator[list[str] | None]:
    """A command prefix that runs a command confined to `cores` CPUs' worth of time."""
    group = _make(cores) if os.geteuid() == 0 or os.access("/sys/fs/cgroup", os.W_OK) else None
    if group is None:
        yield None
        return
    try:
        yield ["sh", "-c", ENTER, str(group)]
    finally:
        # The confined command has exited; an empty cgroup is removed with rmdir.
        with contextlib.suppress(OSError):
            group.rmdir()
