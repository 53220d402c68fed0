"""Running a peer tool or dbscale from a bench script: one environment for both, and the
output, CPU (user + system, from getrusage of the children) and wall time of a run; the CPU a
local server spent meanwhile."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path


def tool_env(cmd: list[str]) -> dict[str, str]:
    """The environment both tools run in: no PG*/MYSQL* settings of the caller's, no colours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "MYSQL"))}
    env["NO_COLOR"] = "1"
    if cmd[0] == "sysbench":
        # sysbench's pgsql driver leaves sslmode to libpq, whose default (prefer) encrypts
        # whenever the server offers TLS; its mysql driver does not encrypt by default.
        env["PGSSLMODE"] = "disable"
    return env


def timed(cmd: list[str]) -> tuple[str, float, float]:
    """Runs cmd; returns its output, the CPU seconds it used (user + system) and wall seconds."""
    env = tool_env(cmd)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd[:3])} failed:\n{proc.stdout}\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.stdout + proc.stderr, cpu, wall


def server_cpu_s(port: int) -> float | None:
    """CPU seconds (user + system, its own and its reaped children's: PostgreSQL's ended
    backends) of the local process listening on `port`; None when it cannot be read (not
    local, or another user's)."""
    listing = subprocess.run(["ss", "-Hltnp", f"sport = :{port}"], capture_output=True,
                             text=True).stdout  # fmt: skip
    found = re.search(r"pid=(\d+)", listing)
    if found is None:
        return None
    try:
        fields = Path(f"/proc/{found.group(1)}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")
