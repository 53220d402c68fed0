"""What the coordinator and its workers say to each other (session.py answers, coordinator.py and
pool.py ask), and what a scaled-out run adds to its record: typed models, read once where an
answer arrives. A worker's answer travels as JSON (a pipe, or Ray), so each is checked here; a
refusal (`{"error", "hint", "kind"}`) is its own message, raised as that error by `raise_refusal`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from dbscale.core.result import CpuTime, Interval, LatencyFigures, RunResult


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Refusal(_Message):
    """A worker could not do what it was asked (tables missing, a bad target): the error it got."""

    error: str
    hint: str | None = None
    kind: str = "DbscaleError"


class WorkerInfo(_Message):
    """Who a worker is: its host and process, CPUs, versions and (under Ray) its node."""

    host: str
    pid: int
    cpus: int
    dbscale_version: str
    core_version: str
    python: str = ""
    executable: str = ""
    node_ip: str | None = None
    node_id: str | None = None


class Ready(_Message):
    """Connected (with the worker's monotonic clock), or ended instead (its result says why)."""

    clock_ns: int | None = None
    ended: bool = False


class Started(_Message):
    """When the `go` arrived by the worker's clock, and how late it was for the start asked."""

    received_ns: int
    late_ms: float


class Polled(_Message):
    """The intervals finished since the last poll (with what an exact merge needs)."""

    intervals: list[Interval]
    ended: bool


class Finished(_Message):
    """A worker's result and how busy its host's CPUs were during the run."""

    result: RunResult
    host_cpu_busy_pct: float | None = None


class WorkerEntry(BaseModel):
    """One worker of a scaled-out run as its record keeps it: where it ran, its share, its start
    skew, and its totals (or, when lost, the intervals its polls brought)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    worker: int = 0
    name: str = ""
    host: str | None = None
    pid: int | None = None
    node_ip: str | None = None
    node_id: str | None = None
    cpus: int | None = None
    first_client: int = 0
    clients: int = 0
    seed: int | None = None
    start_skew_bound_ms: float | None = None
    start_late_ms: float | None = None
    # A lost worker: why, and what its polls brought.
    lost: str | None = None
    intervals: list[Interval] = Field(default_factory=list)
    transactions_received: int | None = None
    # A worker that finished.
    threads: int | None = None
    transactions: int | None = None
    tps: float | None = None
    failed: int | None = None
    errors: int | None = None
    latency_ms: LatencyFigures | None = None
    client_cpu_s: CpuTime | None = None
    host_cpu_busy_pct: float | None = None
    saturated: bool = False
    histogram: str | None = None


class ScaledOutResult(RunResult):
    """The workers' merged result (the core's exact merge) and each worker's entry."""

    config_workers: int = 0
    workers: list[WorkerEntry] = Field(default_factory=list)
    worker_lost: bool = False
