"""What ran: the native run result and its parts, mirroring `crates/dbscale-core/src/stats/
result.rs`, `interval.rs`, `latency.rs`, `commands.rs` and `tpcc.rs` field for field (the contract
test compares them with the core's own schema, `core.contract()`).

The same models read runs.jsonl lines (`results/record.py` adds dbscale's own fields), so they are
tolerant of fields they do not know (an older or newer record keeps them as they were); an answer
straight from the core is read strictly instead (`native.strict`), so a field the core adds and
Python does not declare fails at once.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from dbscale.modes import Routing


class ContractPart(BaseModel):
    """A part of the contract: frozen; fields it does not declare are kept (`native.strict`
    refuses them in an answer straight from the core)."""

    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)


class LatencyFigures(ContractPart):
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


class QueryCounts(ContractPart):
    """Statements by sysbench's classes."""

    read: int = 0
    write: int = 0
    other: int = 0
    total: int = 0


class IntervalLatency(ContractPart):
    mean: float | None = None
    stddev: float | None = None
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None
    max: float | None = None


class IntervalDetail(ContractPart):
    """What merging a worker's interval with the others' exactly needs."""

    index: int = 0
    histogram: str = ""
    lag_sum_us: int = 0
    lag_max_us: int = 0
    lag_count: int = 0
    histograms_by_type: dict[str, str] = Field(default_factory=dict)  # by type name


class Interval(ContractPart):
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
    by_node: list[int] = Field(default_factory=list)  # a cluster's transactions per node
    failovers: int = 0  # clients that lost their node and went on on another in the interval
    by_type: dict[str, int] = Field(default_factory=dict)  # committed, per transaction type
    failed_by_type: dict[str, int] = Field(default_factory=dict)
    errors_by_class: dict[str, int] = Field(default_factory=dict)  # by error class key
    drain: bool = False  # transactions that ended after the measured window
    detail: IntervalDetail | None = None  # a scaled-out run's worker only


class ErrorCounts(ContractPart):
    total: int = 0
    by_class: dict[str, int] = Field(default_factory=dict)
    messages: dict[str, str] = Field(default_factory=dict)  # each class's first, as worded


class CpuTime(ContractPart):
    user: float = 0.0
    system: float = 0.0
    total: float = 0.0


class TransactionType(ContractPart):
    transactions: int = 0
    failed: int = 0
    latency_ms: LatencyFigures | None = None
    histogram: str = ""


class TimedFigures(ContractPart):
    """How often a command or statement ran and failed, its mean and largest latency, and its
    total time (kept so workers' figures merge exactly)."""

    count: int = 0
    failures: int = 0
    mean_ms: float | None = None
    max_ms: float | None = None
    sum_ms: float = 0.0


class CommandFigures(TimedFigures):
    """One command of a script (pgbench `-r`)."""

    script: str = ""
    line: int = 0
    command: str = ""


class StatementLatency(TimedFigures):
    """One statement of a built-in workload as the clients timed it (`statement_timing`): from
    sending it to its whole answer; its histogram is base64 HDR like the run's."""

    name: str = ""
    index: int = 0
    sql: str = ""
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    histogram: str = ""


class Verdict(ContractPart):
    """`ok`, `errors` (some failed) or `failed` (nothing succeeded), with what happened."""

    status: str = "ok"
    message: str = ""


class TpccRule(ContractPart):
    """The rule a TPC-C run is judged by: `spec` (wait) or `cloud-report` (nowait)."""

    name: str = ""
    p90_limits_s: list[float] = Field(default_factory=list)
    min_efficiency_pct: float = 85.0
    new_order_p95_limit_s: float = 10.0


class TpccAudit(ContractPart):
    """A run-time audit of clause 9.2: its value, tolerance and `pass`/`fail`/`skip`."""

    name: str = ""
    value: float | None = None
    low: float = 0.0
    high: float = 0.0
    status: str = "skip"
    note: str = ""


class TpccSection(ContractPart):
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


class HostConnections(ContractPart):
    host: str = ""
    connections: int = 0


class Gap(ContractPart):
    """A stretch without a successful transaction, in seconds from the measured start."""

    from_s: float = 0.0
    to_s: float = 0.0


class NodeAvailability(ContractPart):
    """When transactions succeeded: the first and last success, and each stretch of 100 ms or
    more without one."""

    first_success_s: float | None = None
    last_success_s: float | None = None
    gaps: list[Gap] = Field(default_factory=list)


class NodeFigures(ContractPart):
    """One node of a cluster target: what its clients did there (stats/result.rs NodeResult)."""

    node: str = ""
    connections: int = 0
    transactions: int = 0
    failed: int = 0
    errors: int = 0
    lost: int = 0  # sessions ended by the node's loss, refusal or the client's deadline
    failovers: int = 0  # of those, clients that went on on another node
    latency_ms: LatencyFigures | None = None
    histogram: str = ""
    availability: NodeAvailability | None = None


class TransactionLogSummary(ContractPart):
    """pgbench `-l`: the log's first file (others add `.N`), its files and lines, and the
    first write error (after which that thread logged no more)."""

    path: str = ""
    files: int = 0
    lines: int = 0
    error: str | None = None


class ResultDetail(ContractPart):
    """A scaled-out run's worker: the parts of its result an exact merge needs."""

    connect_histogram: str = ""
    lag_histogram: str = ""
    tally: list[int] = Field(default_factory=list)
    abandoned: int = 0
    clients_never_connected: int = 0


class RunResult(ContractPart):
    """One run's result as the core returns it (stats/result.rs)."""

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
    latency_limit_ms: float | None = None  # pgbench -L
    over_latency_limit: int = 0
    skipped: int = 0  # under a rate: already over the limit when due, never sent
    transaction_log: TransactionLogSummary | None = None  # pgbench -l
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
    routing: Routing | None = None  # how a cluster's clients used its nodes
    nodes: list[NodeFigures] = Field(default_factory=list)
    failovers: int = 0
    availability: NodeAvailability | None = None  # the whole target's (tracked runs)
    clients_connected: int | None = None  # None: recorded before it was counted
    connect_error: str | None = None
    # Its kind: connect_limit (no slot), another connect failure's, or sql (a statement
    # would not prepare on the opened connection); None: recorded before kinds were kept.
    connect_error_kind: str | None = None
    server_max_connections: int | None = None
    tpcc: TpccSection | None = None
    commands: list[CommandFigures] = Field(default_factory=list)  # scripts: per command
    statements: list[StatementLatency] = Field(default_factory=list)  # statement_timing
    detail: ResultDetail | None = None  # a scaled-out run's worker only

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
