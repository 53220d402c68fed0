"""The core's answers to every call but a run: typed models mirroring the Rust structs that the
binding serializes (named beside each), read strictly (`native.strict`). Nothing here parses by
hand: a field the core renames or adds fails the contract test and the first call.
"""

from __future__ import annotations

from pydantic import Field, JsonValue

from dbscale.core.result import ContractPart
from dbscale.modes import WorkloadFamily


class DataStep(ContractPart):
    """One step of a load or a cleanup (`workload::PrepareStep`)."""

    name: str
    seconds: float


class DataSummary(ContractPart):
    """What `prepare` or `cleanup` did (`workload::PrepareSummary`): its steps with their times,
    rows written and the total time."""

    steps: tuple[DataStep, ...] = ()
    rows: int | None = None
    seconds: float | None = None


class ConditionResult(ContractPart):
    """One consistency condition (`tpcc::check::ConditionResult`): `pass`, `fail` (with examples
    of offending rows) or `skip`; for TPC-H, a query's answer with its statement and rows."""

    id: str
    description: str
    status: str
    violations: int
    examples: tuple[str, ...] = ()
    note: str = ""
    seconds: float = 0.0
    statement: str = ""
    rows: tuple[tuple[str | None, ...], ...] = ()


class CheckReport(ContractPart):
    """`dbscale check` (`tpcc::check::CheckReport`): every condition checked on the data."""

    workload: str = ""
    target: str = ""
    warehouses: int = 0
    ok: bool = False
    conditions: tuple[ConditionResult, ...] = ()
    seconds: float = 0.0


class ProbeAnswer(ContractPart):
    """One connection's facts (`engine::admin::ServerFacts`)."""

    server_version: str
    dialect: str  # "postgres" or "mysql"
    tls: bool
    connect_ms: float | None = None
    target: str = ""


class HistogramFigures(ContractPart):
    """Figures of merged latency histograms in milliseconds (`stats::stored::HistogramFigures`);
    `values` follow `quantiles`."""

    count: int
    min: float | None = None
    mean: float | None = None
    stddev: float | None = None
    max: float | None = None
    quantiles: tuple[float, ...] = ()
    values: tuple[float | None, ...] = ()


class CountsAbove(ContractPart):
    """One stored histogram's count and its counts over each limit asked for
    (`stats::stored::CountsAbove`)."""

    count: int
    above: tuple[int, ...] = ()


class CpuScore(ContractPart):
    """One measurement of the CPU kernels (`micro::cpu::CpuScore`)."""

    threads: int
    iterations: int
    seconds: float
    iterations_per_s: float
    per_thread: tuple[int, ...] = ()


class RequestResponse(ContractPart):
    """One-byte request/response figures (`micro::net::RequestResponse`), in microseconds."""

    seconds: float
    transactions: int
    transactions_per_s: float
    min_us: float
    mean_us: float
    p50_us: float
    p90_us: float
    p99_us: float
    max_us: float
    stddev_us: float


class Streams(ContractPart):
    """Parallel streams' aggregate throughput per half second (`micro::net::Streams`)."""

    streams: int
    seconds: float
    buffer_bytes: int
    series_gbps: tuple[float, ...] = ()
    min_gbps: float
    mean_gbps: float
    max_gbps: float


class ParamEntry(ContractPart):
    """One `--set` parameter of a workload (`workload::params::ParamSpec`)."""

    default: JsonValue = None
    doc: str = ""


class WorkloadEntry(ContractPart):
    """A workload's catalog entry (`workload::WorkloadInfo`)."""

    name: str
    aliases: tuple[str, ...] = ()
    family: WorkloadFamily
    description: str = ""
    params: dict[str, ParamEntry] = Field(default_factory=dict)
