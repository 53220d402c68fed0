"""The worker side of a scaled-out run: what a load-generator process does when the coordinator
asks, whatever carries the asking (a pipe to a local process, a Ray actor). One run at a time:

    prepare(config)  start the engine on this worker's share; it connects, then waits
    ready()          None until connected; then this machine's monotonic clock, in ns
    go(at_ns)        start at that instant of this machine's clock
    poll()           the intervals finished since the last poll (with their detail), and
                     whether the run has ended: the coordinator's heartbeat
    cancel()         stop at the next transaction boundary
    result()         the engine's result, with the host's CPU use during the run

Every answer is plain JSON-able data.
"""

from __future__ import annotations

import os
import platform
import socket
import sys
import time
from pathlib import Path

from dbscale import core
from dbscale.core.answers import DataSummary
from dbscale.core.config import RunConfig
from dbscale.errors import DbscaleError
from dbscale.scaleout.messages import Finished, Polled, Ready, Refusal, Started, WorkerInfo


def _host_cpu() -> tuple[int, int] | None:
    """(busy, total) jiffies of the whole host from /proc/stat."""
    try:
        with Path("/proc/stat").open(encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def _ray_node() -> tuple[str | None, str | None]:
    """The node's address and id when this session is a Ray actor."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None, None
    return str(ray.util.get_node_ip_address()), str(ray.get_runtime_context().get_node_id())


def _refusal(exc: DbscaleError) -> Refusal:
    return Refusal(error=exc.message, hint=exc.hint, kind=type(exc).__name__)


class WorkerSession:
    def __init__(self) -> None:
        self._run: core.Run | None = None
        self._cpu_at_start: tuple[int, int] | None = None
        self._asked_start_ns: int | None = None

    def info(self) -> WorkerInfo:
        from dbscale import __version__

        node_ip, node_id = _ray_node()
        return WorkerInfo(
            host=socket.gethostname(),
            pid=os.getpid(),
            cpus=len(os.sched_getaffinity(0)),
            dbscale_version=__version__,
            core_version=core.version(),
            python=platform.python_version(),
            executable=sys.executable,
            node_ip=node_ip,
            node_id=node_id,
        )

    def prepare(self, config_json: str) -> Refusal | None:
        """Starts the engine on this worker's share (gated: it connects, then waits)."""
        if self._run is not None:
            self.cancel()
        config = RunConfig.model_validate_json(config_json)
        self._asked_start_ns = None
        try:
            self._run = core.Run(config)
        except DbscaleError as exc:
            return _refusal(exc)
        return None

    def load(self, config_json: str) -> DataSummary | Refusal:
        """One phase or part of a split load (`config.load_part`): the core's prepare summary."""
        config = RunConfig.model_validate_json(config_json)
        try:
            return core.prepare(config)
        except DbscaleError as exc:
            return _refusal(exc)

    def ready(self) -> Ready | None:
        """This machine's monotonic clock once connected; `ended` if the run ended instead
        (it could not start: the result says why)."""
        run = self._require()
        if run.ready():
            return Ready(clock_ns=time.monotonic_ns())
        if run.wait(0):
            return Ready(ended=True)
        return None

    def go(self, at_ns: int) -> Started:
        run = self._require()
        now = time.monotonic_ns()
        self._asked_start_ns = at_ns
        self._cpu_at_start = _host_cpu()
        run.go(max(at_ns - now, 0) / 1e9)
        return Started(received_ns=now, late_ms=max(now - at_ns, 0) / 1e6)

    def poll(self) -> Polled:
        run = self._require()
        ended = run.wait(0)
        return Polled(intervals=run.poll(), ended=ended)

    def cancel(self) -> None:
        if self._run is not None:
            self._run.cancel()

    def result(self) -> Finished:
        run = self._require()
        native = run.result()
        after = _host_cpu()
        busy = None
        if self._cpu_at_start is not None and after is not None:
            spent = after[1] - self._cpu_at_start[1]
            busy = 100.0 * (after[0] - self._cpu_at_start[0]) / spent if spent > 0 else None
        self._run = None
        return Finished(result=native, host_cpu_busy_pct=busy)

    def _require(self) -> core.Run:
        if self._run is None:
            raise DbscaleError("no run on this worker", "the coordinator calls prepare first")
        return self._run
