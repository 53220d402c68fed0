"""The `observe` section of a run record (docs/observe.md), typed: what the observer saw of the
client host, the server and its sessions, and the verdict on what limited the run. The observer
builds it; results/record.py keeps it in each record. Tolerant like the record: a field another
version wrote is kept as it was.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from dbscale.observe.cluster import ClusterObservation
from dbscale.observe.host_facts import HostSummary
from dbscale.observe.statements import StatementsRecord


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class ServerFacts(_Part):
    """What a target's server is (host.json's `servers`): its dialect, whether it ran on this
    host, the CPUs it may use, its version and settings."""

    dialect: str | None = None
    local: bool | None = None
    vcpus: int | None = None
    version: str | None = None
    settings: dict[str, JsonValue] | None = None

    def facts(self) -> ServerFacts:
        return ServerFacts.model_validate(self.model_dump(include=set(ServerFacts.model_fields)))


class ObservedServer(ServerFacts):
    """The server as observed during one run: its facts, its process, and its statistics'
    deltas over the run (counters differenced within each life of the server, then summed)."""

    pid: int | None = None
    stats_window_s: float | None = None
    stats: dict[str, int | float] | None = None
    performance_schema_waits: dict[str, dict[str, int | float]] | None = None


class WaitsRecord(_Part):
    """The sampled sessions' states and wait events (`observe/waits.py`)."""

    samples: int = 0
    interval_ms: float | None = None
    sessions_mean: float | None = None
    active_mean: float | None = None
    states: dict[str, int] = Field(default_factory=dict)
    events: dict[str, int | float] = Field(default_factory=dict)
    classes: dict[str, float] = Field(default_factory=dict)


class Finding(_Part):
    verdict: str = ""
    evidence: str = ""


class LimitedBy(_Part):
    """The observer's verdict on what limited the run (`observe/verdict.py`)."""

    verdict: str = ""
    summary: str = ""
    evidence: str = ""
    numbers: dict[str, int | float | str | None] = Field(default_factory=dict)
    client_bound: bool = False
    warning: str | None = None
    hint: str | None = None
    host_warning: str | None = None  # other processes took a material share of the host's CPU
    also: list[Finding] = Field(default_factory=list)


class ResourceTable(_Part):
    """Per-second resource use: `columns` name the values of each row; `mean` over the window."""

    interval_s: float = 1.0
    columns: list[str] = Field(default_factory=list)
    rows: list[list[int | float | None]] = Field(default_factory=list)
    mean: dict[str, int | float] = Field(default_factory=dict)

    def as_rows(self) -> list[dict[str, int | float | None]]:
        """One mapping per row (for readers of runs.jsonl)."""
        return [dict(zip(self.columns, values, strict=False)) for values in self.rows]


class Overhead(_Part):
    """What observing cost: the observer's CPU, its server session's CPU, its snapshots and
    queries."""

    observer_cpu_cores: float = 0.0
    server_session_cpu_cores: float | None = None
    snapshot_ms_mean: float | None = None
    queries_per_s: float = 0.0


class ObservedGap(_Part):
    """A stretch of the run the observer's session was lost (seconds into the window)."""

    from_s: float
    to_s: float | None = None
    reason: str = ""


class ObserveSection(_Part):
    """What `dbscale.observe` saw during the run (docs/observe.md)."""

    version: int = 1
    host: HostSummary = Field(default_factory=HostSummary)
    window_s: float | None = None
    resources: ResourceTable | None = None
    server: ObservedServer = Field(default_factory=ObservedServer)
    waits: WaitsRecord | None = None
    overhead: Overhead = Field(default_factory=Overhead)
    limited_by: LimitedBy | None = None
    cluster: ClusterObservation | None = None  # a target of several nodes: each node's figures
    statements: StatementsRecord | None = None  # each statement's cost to the server
    gaps: list[ObservedGap] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
