"""What each micro-benchmark returns, typed: `dbscale micro cpu|disk|net --json` prints these,
micro.jsonl keeps them as each step's `result`, and the figures, the console and the report read
them back through these models. fio's own JSON report is read here too, once.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from dbscale.core.answers import RequestResponse, Streams


class _Result(BaseModel):
    # Tolerant: a record written by another version keeps what this one does not know.
    model_config = ConfigDict(extra="allow", frozen=True)

    def record(self) -> dict[str, JsonValue]:
        """As `--json` prints it and micro.jsonl keeps it."""
        return self.model_dump(mode="json", exclude_unset=True)


class CpuFigures(_Result):
    """Per-run iterations per second of one mode, summarized."""

    runs: list[float] = Field(default_factory=list)
    median: float = 0.0
    ci_low: float | None = None
    ci_high: float | None = None
    cv_pct: float | None = None


class CpuResult(_Result):
    kernels: str = ""
    seconds: float = 0.0
    repetitions: int = 0
    threads: int = 0
    single: CpuFigures = Field(default_factory=CpuFigures)
    multi: CpuFigures = Field(default_factory=CpuFigures)
    per_vcpu: CpuFigures = Field(default_factory=CpuFigures)


class Direction(_Result):
    """One direction of a fio job: IOPS, bandwidth, mean latency and completion percentiles
    (`"99"`, `"99.9"`, ...) in microseconds."""

    iops: float = 0.0
    bandwidth_kib_s: float = 0.0
    latency_us_mean: float = 0.0
    latency_us: dict[str, float] = Field(default_factory=dict)


class Fsync(_Result):
    count: int = 0
    latency_us_mean: float = 0.0
    latency_us: dict[str, float] = Field(default_factory=dict)


class DiskJob(_Result):
    job: str = ""
    read: Direction = Field(default_factory=Direction)
    write: Direction = Field(default_factory=Direction)
    fsync: Fsync | None = None


class DiskResult(_Result):
    dir: str = ""
    direct: bool = True
    size_bytes: int = 0
    runtime_s: float = 0.0
    fio_version: str | None = None
    jobs: list[DiskJob] = Field(default_factory=list)


class SearchStep(_Result):
    streams: int
    mean_gbps: float


class RequestResponseFigures(_Result):
    """The core's request/response answer (`core.answers.RequestResponse`) as a record keeps it."""

    seconds: float | None = None
    transactions: int | None = None
    transactions_per_s: float | None = None
    min_us: float | None = None
    mean_us: float | None = None
    p50_us: float | None = None
    p90_us: float | None = None
    p99_us: float | None = None
    max_us: float | None = None
    stddev_us: float | None = None


class StreamFigures(_Result):
    """The core's streams answer (`core.answers.Streams`) as a record keeps it."""

    streams: int | None = None
    seconds: float | None = None
    buffer_bytes: int | None = None
    series_gbps: list[float] = Field(default_factory=list)
    min_gbps: float | None = None
    mean_gbps: float | None = None
    max_gbps: float | None = None


class NetResult(_Result):
    target: str = ""
    request_response: RequestResponseFigures | None = None
    search: list[SearchStep] = Field(default_factory=list)
    search_rule: str = ""
    streams: StreamFigures | None = None

    @classmethod
    def of(
        cls, target: str, rr: RequestResponse, search: list[SearchStep], rule: str, streams: Streams
    ) -> NetResult:
        return cls(
            target=target,
            request_response=RequestResponseFigures.model_validate(rr.model_dump()),
            search=search,
            search_rule=rule,
            streams=StreamFigures.model_validate(streams.model_dump()),
        )


MicroResult = CpuResult | DiskResult | NetResult
RESULT_TYPES: dict[str, type[CpuResult] | type[DiskResult] | type[NetResult]] = {
    "cpu": CpuResult, "disk": DiskResult, "net": NetResult,
}  # fmt: skip


class MicroWhere(_Result):
    """Where a micro step ran, as its record keeps it: local | remote | client, the CPUs of a
    local size, the directory fio wrote in."""

    how: str = ""
    cpus: str | None = None
    vcpus: int | float | None = None
    disk_dir: str | None = None


# fio's JSON report (`--output-format=json`), as much of it as dbscale reads.


class _Fio(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class FioLatency(_Fio):
    mean: float = 0.0
    percentile: dict[str, float] = Field(default_factory=dict)


class FioDirection(_Fio):
    iops: float = 0.0
    bw: float = 0.0
    clat_ns: FioLatency = Field(default_factory=FioLatency)
    lat_ns: FioLatency = Field(default_factory=FioLatency)


class FioSync(_Fio):
    total_ios: int = 0
    lat_ns: FioLatency = Field(default_factory=FioLatency)


class FioJob(_Fio):
    jobname: str = ""
    read: FioDirection = Field(default_factory=FioDirection)
    write: FioDirection = Field(default_factory=FioDirection)
    sync: FioSync = Field(default_factory=FioSync)


class FioReport(_Fio):
    fio_version: str | None = Field(default=None, alias="fio version")
    jobs: list[FioJob] = Field(default_factory=list)
