"""One line of runs.jsonl as a typed record: the native run result (`crates/dbscale-core/src/
stats/result.rs`, field for field), what dbscale adds (run id, times, the redacted configuration,
version), where the run sits in its study, and the observation's section. Records are parsed here
when they are read and built here when they are written; everything after works on `RunRecord`.

Reading is tolerant: fields a record lacks take their defaults (older result directories, or a
field a later version added), and fields this version does not know are kept as they were, so a
record read and written again is unchanged (`to_json` writes only the fields the record has).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from dbscale.errors import ResultsError


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class LatencyFigures(_Part):
    """A latency summary in milliseconds (a run's, a transaction type's, connect times, lag)."""

    count: int = 0
    min: float | None = None
    mean: float | None = None
    stddev: float | None = None
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    p999: float | None = None
    max: float | None = None

    def percentile(self, name: str) -> float | None:
        value = getattr(self, name, None)
        return float(value) if isinstance(value, int | float) else None


class QueryCounts(_Part):
    """Statements by sysbench's classes."""

    read: int = 0
    write: int = 0
    other: int = 0
    total: int = 0


class IntervalLatency(_Part):
    mean: float | None = None
    stddev: float | None = None
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None
    max: float | None = None


class Interval(_Part):
    """One per-second snapshot (`stats/interval.rs`); `t_s` is its end since the measured start."""

    t_s: float = 0.0
    transactions: int = 0
    tps: float = 0.0
    failed: int = 0
    errors: int = 0
    latency_ms: IntervalLatency | None = None
    lag_ms: float | None = None
    lag_max_ms: float | None = None
    queries: QueryCounts = Field(default_factory=QueryCounts)
    qps: float = 0.0
    retries: int = 0
    clients_connected: int | None = None  # None: recorded before it was counted
    drain: bool = False  # transactions that ended after the measured window


class ErrorCounts(_Part):
    total: int = 0
    by_class: dict[str, int] = Field(default_factory=dict)


class CpuTime(_Part):
    user: float = 0.0
    system: float = 0.0
    total: float = 0.0


class TransactionType(_Part):
    transactions: int = 0
    failed: int = 0
    latency_ms: LatencyFigures | None = None
    histogram: str = ""


class CommandFigures(_Part):
    """One command of a script (pgbench `-r`): how often it ran, its mean and largest latency,
    how often it failed."""

    script: str = ""
    line: int = 0
    command: str = ""
    count: int = 0
    failures: int = 0
    mean_ms: float | None = None
    max_ms: float | None = None
    sum_ms: float = 0.0


class Verdict(_Part):
    """`ok`, `errors` (some failed) or `failed` (nothing succeeded), with what happened."""

    status: str = "ok"
    message: str = ""


class RecordedTarget(_Part):
    url: str | None = None
    tls: str | None = None


class RecordedScript(_Part):
    """One script of a script workload's mix as it ran (its text is kept too)."""

    name: str = ""
    weight: int = 1


class RecordedWorkload(_Part):
    name: str | None = None
    params: dict[str, JsonValue] = Field(default_factory=dict)
    scripts: list[RecordedScript] = Field(default_factory=list)


class TpccRule(_Part):
    """The rule a TPC-C run is judged by: `spec` (wait) or `cloud-report` (nowait)."""

    name: str = ""
    p90_limits_s: list[float] = Field(default_factory=list)
    min_efficiency_pct: float = 85.0
    new_order_p95_limit_s: float = 10.0


class TpccAudit(_Part):
    """A run-time audit of clause 9.2: its value, tolerance and `pass`/`fail`/`skip`."""

    name: str = ""
    value: float | None = None
    low: float = 0.0
    high: float = 0.0
    status: str = "skip"
    note: str = ""


class TpccSection(_Part):
    """TPC-C's figures and verdict (workload/tpcc/summary.rs). `pass` is a Python keyword, so the
    field is `passed`, read and written as `pass`."""

    model_config = ConfigDict(
        extra="allow", frozen=True, populate_by_name=True, serialize_by_alias=True
    )

    warehouses: int = 0
    active_warehouses: int = 0
    wait: bool = True
    tpmc: float = 0.0  # New-Orders per minute, rolled-back ones included
    tpm_total: float = 0.0
    new_orders: int = 0
    rolled_back_new_orders: int = 0
    efficiency_pct: float = 0.0
    efficiency_meaningful: bool = True
    rule: TpccRule = Field(default_factory=TpccRule)
    passed: bool = Field(default=False, alias="pass")
    reasons: list[str] = Field(default_factory=list)
    audits: list[TpccAudit] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    c_last_source: str = ""


class ConsistencyCondition(_Part):
    id: str = ""
    status: str = ""  # pass | fail | skip
    violations: int = 0
    examples: list[str] = Field(default_factory=list)
    note: str = ""


class ConsistencySection(_Part):
    """The consistency check run after the run (plan `prepare.check: run`): `ok` when every
    condition held; `error` when the check itself could not run."""

    ok: bool = False
    warehouses: int = 0
    seconds: float = 0.0
    conditions: list[ConsistencyCondition] = Field(default_factory=list)
    error: str = ""

    @property
    def failed(self) -> list[str]:
        return [c.id for c in self.conditions if c.status == "fail"]


class HostConnections(_Part):
    host: str = ""
    connections: int = 0


class RecordedConfig(_Part):
    """The run's resolved configuration (`config.RunConfig`) as stored, its URL redacted."""

    target: RecordedTarget = Field(default_factory=RecordedTarget)
    workload: RecordedWorkload = Field(default_factory=RecordedWorkload)
    protocol: str | None = None
    connect: str | None = None
    clients: int | None = None
    threads: int | None = None
    duration_s: float | None = None
    ramp_s: float = 0.0
    rate_tps: float | None = None
    max_tries: int | None = None
    transactions: int | None = None  # per client, for a counted run (pgbench -t)
    seed: int | None = None
    interval_s: float = 1.0


class Finding(_Part):
    verdict: str = ""
    evidence: str = ""


class LimitedBy(_Part):
    """The observer's verdict on what limited the run (`observe/verdict.py`)."""

    verdict: str = ""
    summary: str = ""
    evidence: str = ""
    client_bound: bool = False
    warning: str | None = None
    hint: str | None = None
    host_warning: str | None = None  # other processes took a material share of the host's CPU
    also: list[Finding] = Field(default_factory=list)


class ResourceTable(_Part):
    """Per-second resource use: `columns` name the values of each row; `mean` over the window."""

    interval_s: float = 1.0
    columns: list[str] = Field(default_factory=list)
    rows: list[list[float | None]] = Field(default_factory=list)
    mean: dict[str, float] = Field(default_factory=dict)


class ObserveSection(_Part):
    """What `dbscale.observe` saw during the run (docs/observe.md)."""

    version: int = 1
    host: dict[str, JsonValue] = Field(default_factory=dict)
    window_s: float | None = None
    resources: ResourceTable | None = None
    server: dict[str, JsonValue] = Field(default_factory=dict)
    waits: dict[str, JsonValue] | None = None
    overhead: dict[str, JsonValue] = Field(default_factory=dict)
    limited_by: LimitedBy | None = None
    notes: list[str] = Field(default_factory=list)


class OutageSection(_Part):
    """A stretch of a run in which no transaction completed (results/outages.py)."""

    start_s: float = 0.0
    length_s: float = 0.0
    errors: int = 0


class RunRecord(_Part):
    """One run as runs.jsonl holds it."""

    # The native result (stats/result.rs).
    workload: str = ""
    target: str = ""
    server_version: str = ""
    tls: bool = False
    clients: int = 0
    threads: int = 0
    protocol: str = ""
    connect: str = "persistent"
    rate_tps: float | None = None
    seed: int = 0
    workload_params: dict[str, JsonValue] = Field(default_factory=dict)
    duration_s: float = 0.0
    transactions: int = 0
    tps: float = 0.0
    failed: int = 0
    retried: int = 0
    retries: int = 0
    cancelled: bool = False
    errors: ErrorCounts = Field(default_factory=ErrorCounts)
    latency_ms: LatencyFigures | None = None
    connect_ms: LatencyFigures | None = None
    schedule_lag_ms: LatencyFigures | None = None
    late_starts: int = 0
    unstarted: int = 0
    queries: QueryCounts = Field(default_factory=QueryCounts)
    qps: float = 0.0
    client_cpu_s: CpuTime = Field(default_factory=CpuTime)
    client_cpu_us_per_txn: float | None = None
    transaction_types: dict[str, TransactionType] = Field(default_factory=dict)
    histogram: str = ""  # all types merged: base64 HDR V2 deflate, microseconds
    intervals: list[Interval] = Field(default_factory=list)
    verdict: Verdict = Field(default_factory=Verdict)
    ramp_s: float = 0.0
    ramp_transactions: int = 0
    ramp_errors: int = 0
    connections: int | None = None  # shared by the clients; None: one each
    connections_by_host: list[HostConnections] = Field(default_factory=list)
    clients_connected: int | None = None  # None: recorded before it was counted
    connect_error: str | None = None
    server_max_connections: int | None = None
    tpcc: TpccSection | None = None
    commands: list[CommandFigures] = Field(default_factory=list)  # scripts: per command
    # What dbscale adds.
    run_id: str = ""
    started_at: str = ""
    ended_at: str = ""
    config: RecordedConfig = Field(default_factory=RecordedConfig)
    warmup: bool = False
    dbscale_version: str = ""
    # Where the run sits in its study.
    run_key: str | None = None
    point_key: str | None = None
    point: dict[str, JsonValue] = Field(default_factory=dict)
    point_fingerprint: str | None = None
    repetition: int | None = None
    warmup_kind: str | None = None  # None (measured), "point" or "data"
    target_name: str | None = None
    target_info: dict[str, JsonValue] = Field(default_factory=dict)
    study: str | None = None
    observe: ObserveSection | None = None
    consistency: ConsistencySection | None = None
    outages: list[OutageSection] | None = None  # results/outages.py
    outages_counted: bool = False  # the plan's statistics.include_outages when it was recorded
    # A scaled-out run (dbscale/scaleout): each worker's host, share, totals, start skew,
    # histogram; `worker_lost` when one died or stopped answering (the run failed; --resume
    # runs it again).
    workers: list[dict[str, JsonValue]] = Field(default_factory=list)
    worker_lost: bool = False

    @classmethod
    def from_json(cls, data: Any, where: str = "a record") -> RunRecord:
        """A parsed runs.jsonl line; `ResultsError` naming `where` when it is not a record."""
        if not isinstance(data, dict):
            raise ResultsError(
                f"{where} is not a JSON object",
                "runs.jsonl holds one JSON object per line, as `dbscale run` writes it",
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"])
            raise ResultsError(
                f"{where}: field {field}: {first['msg']}",
                "runs.jsonl holds records as `dbscale run` writes them; was it edited?",
            ) from None

    def to_json(self) -> str:
        """The runs.jsonl line (without its newline): the fields the record has, as it has them."""
        return json.dumps(self.model_dump(mode="json", exclude_unset=True), separators=(",", ":"))

    @property
    def status(self) -> str:
        """`cancelled`, or the verdict's status."""
        return "cancelled" if self.cancelled else self.verdict.status

    @property
    def window_intervals(self) -> list[Interval]:
        """The per-second intervals of the measured window, without the drain after it."""
        return [interval for interval in self.intervals if not interval.drain]

    @property
    def clients_refused(self) -> int:
        """Clients that tried to connect and never did (0 for records without the count)."""
        if self.clients_connected is None:
            return 0
        return max(self.clients - self.clients_connected, 0)

    @property
    def measured(self) -> bool:
        """Counts in statistics: not a warm-up, not cancelled, not failed."""
        if self.verdict.status == "outage" and not self.outages_counted:
            return False
        return not self.warmup and not self.cancelled and self.verdict.status != "failed"

    @property
    def group_key(self) -> str:
        """The point the run belongs to; runs recorded before studies existed group by clients."""
        return self.point_key or f"clients={self.clients}"

    @property
    def limited_by(self) -> LimitedBy | None:
        return self.observe.limited_by if self.observe is not None else None

    @property
    def tpmc(self) -> float | None:
        """TPC-C: New-Orders per minute of the measured window; None for others."""
        if self.tpcc is not None:
            return self.tpcc.tpmc
        if not self.workload.startswith("tpcc") or self.duration_s <= 0:
            return None
        for name in ("new_order", "new-order", "neworder"):
            entry = self.transaction_types.get(name)
            if entry is not None:
                return 60.0 * entry.transactions / self.duration_s
        return None

    def type_histograms(self) -> dict[str, str]:
        """Each transaction type's stored histogram, by type name."""
        return {name: t.histogram for name, t in self.transaction_types.items() if t.histogram}
