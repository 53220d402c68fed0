"""The one door to the native module `dbscale._core`: nothing else imports it. It is imported
lazily, so everything that does not measure (option parsing, targets, results) works without it,
and a missing build is one clear error rather than an ImportError traceback. Every native call
goes through here, and a native `CoreError` becomes a `DbscaleError` here, once.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from dbscale.errors import DbscaleError, InternalError, NativeModuleMissingError, from_core
from dbscale.values import JsonObject

if TYPE_CHECKING:
    from dbscale.config import RunConfig, WorkloadConfig
    from dbscale.results.record import Interval, RunRecord

# One row of a session query: text values or NULL.
Row = list[str | None]


def load_core() -> ModuleType:
    """The native module (see `_core.pyi`), or `NativeModuleMissingError`."""
    try:
        return importlib.import_module("dbscale._core")
    except ImportError as exc:
        raise NativeModuleMissingError(
            f"the native module dbscale._core is not built ({exc})"
        ) from None


@contextmanager
def _translated() -> Iterator[None]:
    """Native errors become `DbscaleError`s; Ctrl-C and everything else pass unchanged."""
    try:
        yield
    except DbscaleError:
        raise
    except Exception as exc:
        core_error = getattr(load_core(), "CoreError", None)
        if core_error is not None and isinstance(exc, core_error):
            raise from_core(exc) from None
        raise


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise InternalError(f"the native {what} returned malformed JSON: {exc}") from None


def _object(text: str, what: str) -> JsonObject:
    data = _json(text, what)
    if not isinstance(data, dict):
        raise InternalError(f"the native {what} is not a JSON object")
    return data


def version() -> str:
    """The native core's version."""
    return str(load_core().version())


def workloads() -> JsonObject:
    """The workload catalog: `{name: {"description", "aliases", "params": {...}}}`."""
    with _translated():
        return _object(load_core().workloads(), "workload catalog")


@dataclass(frozen=True)
class DataStep:
    name: str
    seconds: float


@dataclass(frozen=True)
class DataSummary:
    """What `prepare` or `cleanup` did: its steps with their times, rows written, total time."""

    steps: tuple[DataStep, ...]
    rows: int | None
    seconds: float | None

    @classmethod
    def of(cls, data: JsonObject) -> DataSummary:
        steps = [step for step in _list(data.get("steps")) if isinstance(step, dict)]
        return cls(
            steps=tuple(
                DataStep(str(s.get("name")), _float(s.get("seconds")) or 0.0) for s in steps
            ),
            rows=rows if isinstance(rows := data.get("rows"), int) else None,
            seconds=_float(data.get("seconds")),
        )


@dataclass(frozen=True)
class ProbeAnswer:
    """One connection's facts: what the server is, whether the session is encrypted."""

    server_version: str
    dialect: str  # "postgres" or "mysql"
    tls: bool
    connect_ms: float | None


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def check_workload(workload: WorkloadConfig) -> None:
    """Builds the workload without connecting: a script that does not parse is refused here,
    with its file, line and column, before anything runs."""
    with _translated():
        load_core().check_workload(workload.model_dump_json())


def prepare(config: RunConfig) -> DataSummary:
    """Loads the workload's data."""
    with _translated():
        return DataSummary.of(_object(load_core().prepare(config.to_core_json()), "prepare"))


def cleanup(config: RunConfig) -> DataSummary:
    """Drops the workload's tables."""
    with _translated():
        return DataSummary.of(_object(load_core().cleanup(config.to_core_json()), "cleanup"))


@dataclass(frozen=True)
class ConditionResult:
    """One consistency condition: `pass`, `fail` (with examples of offending rows) or `skip`."""

    id: str
    description: str
    status: str
    violations: int
    examples: tuple[str, ...]
    note: str
    seconds: float


@dataclass(frozen=True)
class CheckReport:
    """`dbscale check`: every condition checked on the target's data."""

    warehouses: int
    ok: bool
    conditions: tuple[ConditionResult, ...]
    seconds: float


def check(config: RunConfig) -> CheckReport:
    """Checks the consistency conditions of the workload's data (TPC-C's 3.3.2.x)."""
    with _translated():
        data = _object(load_core().check(config.to_core_json()), "check report")
    conditions = [c for c in _list(data.get("conditions")) if isinstance(c, dict)]
    return CheckReport(
        warehouses=int(w) if isinstance(w := data.get("warehouses"), int) else 0,
        ok=data.get("ok") is True,
        conditions=tuple(
            ConditionResult(
                id=str(c.get("id")),
                description=str(c.get("description")),
                status=str(c.get("status")),
                violations=int(v) if isinstance(v := c.get("violations"), int) else 0,
                examples=tuple(str(e) for e in _list(c.get("examples"))),
                note=str(c.get("note") or ""),
                seconds=_float(c.get("seconds")) or 0.0,
            )
            for c in conditions
        ),
        seconds=_float(data.get("seconds")) or 0.0,
    )


def consistency_section(report: CheckReport) -> JsonObject:
    """A check report as a run record's `consistency` section (results/record.py)."""
    return {
        "ok": report.ok,
        "warehouses": report.warehouses,
        "seconds": report.seconds,
        "conditions": [
            {"id": c.id, "status": c.status, "violations": c.violations,
             "examples": list(c.examples), "note": c.note}
            for c in report.conditions
        ],
    }  # fmt: skip


def probe(config: RunConfig) -> ProbeAnswer:
    """Connects once and tells what answered."""
    with _translated():
        data = _object(load_core().probe(config.to_core_json()), "probe answer")
    return ProbeAnswer(
        server_version=str(data.get("server_version") or ""),
        dialect=str(data.get("dialect") or "postgres"),
        tls=data.get("tls") is True,
        connect_ms=_float(data.get("connect_ms")),
    )


class Run:
    """A run going on in native threads (the GIL is released while it runs)."""

    def __init__(self, config: RunConfig) -> None:
        with _translated():
            self._handle = load_core().start_run(config.to_core_json())

    def wait(self, timeout_s: float) -> bool:
        """Blocks up to `timeout_s`; True once the run has ended (or failed)."""
        with _translated():
            return bool(self._handle.wait(timeout_s))

    def poll(self) -> list[Interval]:
        """The per-second intervals finished since the last poll."""
        from dbscale.results.record import Interval

        with _translated():
            data = _json(self._handle.poll(), "poll")
        items = data if isinstance(data, list) else []
        return [Interval.model_validate(item) for item in items if isinstance(item, dict)]

    def cancel(self) -> None:
        """First call: stop at the next transaction boundary; second: abandon those in flight."""
        self._handle.cancel()

    def ready(self) -> bool:
        """A scaled-out run's worker: its clients are connected and it waits for `go`."""
        return bool(self._handle.ready())

    def go(self, delay_s: float) -> None:
        """A scaled-out run's worker starts `delay_s` from now."""
        self._handle.go(delay_s)

    def result_json(self) -> JsonObject:
        """Blocks until the run ends: its result as the core wrote it, or the start-up error."""
        with _translated():
            return _object(self._handle.result(), "run result")

    def result(self) -> RunRecord:
        """Blocks until the run ends: its result (`stats/result.rs`) as a record without
        dbscale's fields yet, or the start-up error."""
        from dbscale.results.record import RunRecord

        return RunRecord.from_json(self.result_json(), "the native run result")


def merge_worker_results(config: RunConfig, results: Sequence[JsonObject]) -> JsonObject:
    """One result from a scaled-out run's worker results (the core's exact merge)."""
    texts = [json.dumps(r, separators=(",", ":")) for r in results]
    with _translated():
        return _object(
            load_core().merge_worker_results(config.to_core_json(), texts), "merged result"
        )


class Session:
    """One connection for queries outside the measured loop (server statistics, checks);
    `with closing(Session(config)) as session:` closes it after use."""

    def __init__(self, config: RunConfig) -> None:
        with _translated():
            self._session = load_core().Session(config.to_core_json())

    def query(self, sql: str) -> list[Row]:
        """The rows of `sql`, each a list of text values or None."""
        with _translated():
            data = _json(self._session.query(sql), "query")
        return [row for row in data if isinstance(row, list)] if isinstance(data, list) else []

    def close(self) -> None:
        self._session.close()


@dataclass(frozen=True)
class HistogramFigures:
    """Figures of merged latency histograms, in milliseconds; `values` follow `quantiles`."""

    count: int
    min: float | None
    mean: float | None
    stddev: float | None
    max: float | None
    quantiles: tuple[float, ...]
    values: tuple[float | None, ...]


def histogram_figures(blobs: Sequence[str], quantiles: Sequence[float]) -> HistogramFigures:
    """Decodes the stored histograms (base64 HDR V2 deflate), merges them exactly and reads
    count, min, mean, stddev, max and the values at `quantiles`, as the run itself reports them.
    `ResultsError` when a blob is not such a histogram or was recorded with other settings."""
    with _translated():
        data = _object(
            load_core().histogram_figures(list(blobs), [float(q) for q in quantiles]),
            "histogram figures",
        )
    return HistogramFigures(
        count=count if isinstance(count := data.get("count"), int) else 0,
        min=_float(data.get("min")),
        mean=_float(data.get("mean")),
        stddev=_float(data.get("stddev")),
        max=_float(data.get("max")),
        quantiles=tuple(float(q) for q in quantiles),
        values=tuple(_float(v) for v in _list(data.get("values"))),
    )


def merge_histograms(blobs: Sequence[str]) -> str:
    """One stored histogram (base64 HDR V2 deflate) holding the exact sum of `blobs`."""
    with _translated():
        return str(load_core().merge_histograms(list(blobs)))


@dataclass(frozen=True)
class CpuScore:
    """One measurement of the CPU kernels (crates/dbscale-core/src/micro)."""

    threads: int
    iterations: int
    seconds: float
    iterations_per_s: float


def micro_cpu(threads: int, seconds: float) -> CpuScore:
    """Iterations per second of dbscale's CPU kernels on `threads` threads (0: every CPU)."""
    with _translated():
        data = _object(
            load_core().micro_cpu(json.dumps({"threads": threads, "seconds": seconds})),
            "CPU score",
        )
    return CpuScore(
        threads=int(str(data.get("threads", 0))),
        iterations=int(str(data.get("iterations", 0))),
        seconds=_float(data.get("seconds")) or 0.0,
        iterations_per_s=_float(data.get("iterations_per_s")) or 0.0,
    )


class NetServer:
    """A `dbscale micro net` server (the core's), listening until `stop()`."""

    def __init__(self, bind: str, port: int) -> None:
        with _translated():
            self._server = load_core().NetServer(bind, port)

    @property
    def addr(self) -> str:
        return str(self._server.addr())

    def stop(self) -> None:
        self._server.stop()


def micro_net_rr(addr: str, seconds: float) -> JsonObject:
    """One-byte request/response against a `micro net` server (latencies in microseconds)."""
    with _translated():
        return _object(load_core().micro_net_rr(addr, seconds), "request/response figures")


def micro_net_streams(addr: str, streams: int, seconds: float, buffer_bytes: int) -> JsonObject:
    """Parallel streams to a `micro net` server: the half-second aggregate series in Gbit/s."""
    with _translated():
        return _object(
            load_core().micro_net_streams(addr, streams, seconds, buffer_bytes), "stream figures"
        )


def pick_stream_count(
    history: Sequence[tuple[int, float]], threshold: float, cap: int
) -> int | None:
    """The report's stream-count search (the core's rule) on (streams, Gbit/s) steps."""
    found = load_core().pick_stream_count(list(history), threshold, cap)
    return int(found) if found is not None else None
