"""The one door to the native module `dbscale._core`: nothing else imports it. It is imported
lazily, so everything that does not measure (option parsing, targets, results) works without it,
and a missing build is one clear error rather than an ImportError traceback. Every native call
goes through here, and a native `CoreError` becomes a `DbscaleError` here, once.
"""

from __future__ import annotations

import functools
import importlib
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from dbscale.core.answers import (
    CheckReport,
    CountsAbove,
    CpuScore,
    DataSummary,
    HistogramFigures,
    ProbeAnswer,
    RequestResponse,
    Streams,
    WorkloadEntry,
)
from dbscale.core.result import Interval, RunResult
from dbscale.errors import DbscaleError, InternalError, NativeModuleMissingError, from_core
from dbscale.modes import WorkloadFamily

if TYPE_CHECKING:
    from dbscale.core.config import RunConfig, WorkloadConfig

Answer = TypeVar("Answer", bound=BaseModel)

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


def strict(model: type[Answer], data: Any, what: str) -> Answer:
    """`data` read as `model`, no field missing or unknown: the core and Python disagreeing is a
    dbscale bug, said at once."""
    try:
        read = model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top)"
        raise InternalError(
            f"the native {what} does not match its contract at {where}: {first['msg']}"
        ) from None
    undeclared = _undeclared(read, "")
    if undeclared is not None:
        raise InternalError(
            f"the native {what} does not match its contract: {undeclared} is not declared"
        )
    return read


def _undeclared(value: object, at: str) -> str | None:
    """The place of the first field a model does not declare, anywhere below `value`."""
    if isinstance(value, BaseModel):
        if value.model_extra:
            return f"{at}{min(value.model_extra)}"
        children: Iterable[tuple[str, object]] = (
            (f"{at}{name}.", getattr(value, name)) for name in type(value).model_fields
        )
    elif isinstance(value, list | tuple):
        children = ((f"{at}{i}.", item) for i, item in enumerate(value))
    elif isinstance(value, dict):
        children = ((f"{at}{key}.", item) for key, item in value.items())
    else:
        return None
    return next((found for place, child in children if (found := _undeclared(child, place))),
                None)  # fmt: skip


def _answer(model: type[Answer], text: str, what: str) -> Answer:
    return strict(model, _json(text, what), what)


def version() -> str:
    """The native core's version."""
    return str(load_core().version())


def workloads() -> dict[str, WorkloadEntry]:
    """The workload catalog by name (`workload::catalog`)."""
    with _translated():
        data = _json(load_core().workloads(), "workload catalog")
    if not isinstance(data, dict):
        raise InternalError("the native workload catalog is not a JSON object")
    return {
        str(name): strict(WorkloadEntry, entry, "workload catalog") for name, entry in data.items()
    }


@functools.cache
def family_of(name: str) -> WorkloadFamily | None:
    """The family of the workload called `name` or by an alias of it; None when this build does
    not know it (a record written by another version)."""
    for entry in workloads().values():
        if name == entry.name or name in entry.aliases:
            return entry.family
    return None


def check_workload(workload: WorkloadConfig) -> None:
    """Builds the workload without connecting: a script that does not parse is refused here,
    with its file, line and column, before anything runs."""
    with _translated():
        load_core().check_workload(workload.model_dump_json())


def _on_target(call: str, config: RunConfig) -> str:
    """The core's `call` on the config's target (a load, a check, a probe: seconds or minutes
    of native work), waited for so that a signal still ends the command at once."""
    request = config.to_core_json()
    return _interruptible(lambda: str(getattr(load_core(), call)(request)))


def prepare(config: RunConfig) -> DataSummary:
    """Loads the workload's data. Ctrl-C or SIGTERM ends the command at once; the load, cut
    off with the process, leaves its tables partly filled (a later prepare reloads them)."""
    return _answer(DataSummary, _on_target("prepare", config), "prepare")


def cleanup(config: RunConfig) -> DataSummary:
    """Drops the workload's tables."""
    return _answer(DataSummary, _on_target("cleanup", config), "cleanup")


def check(config: RunConfig, timeout_s: float | None = None) -> CheckReport:
    """Checks the consistency conditions of the workload's data (TPC-C's 3.3.2.x); with
    `timeout_s`, a check not done by then is given up with an error."""
    request = config.to_core_json()
    text = _interruptible(lambda: str(load_core().check(request, timeout_s)))
    return _answer(CheckReport, text, "check report")


def probe(config: RunConfig) -> ProbeAnswer:
    """Connects once and tells what answered."""
    return _answer(ProbeAnswer, _on_target("probe", config), "probe answer")


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
        with _translated():
            data = _json(self._handle.poll(), "poll")
        if not isinstance(data, list):
            raise InternalError("the native poll is not a JSON list")
        return [strict(Interval, item, "interval") for item in data]

    def cancel(self) -> None:
        """First call: stop at the next transaction boundary; second: abandon those in flight."""
        self._handle.cancel()

    def since_start(self) -> float | None:
        """Seconds since the measured start (negative during the ramp); None until it is
        fixed (clients still connecting)."""
        value = self._handle.since_start()
        return None if value is None else float(value)

    def ready(self) -> bool:
        """A scaled-out run's worker: its clients are connected and it waits for `go`."""
        return bool(self._handle.ready())

    def go(self, delay_s: float) -> None:
        """A scaled-out run's worker starts `delay_s` from now."""
        self._handle.go(delay_s)

    def result(self) -> RunResult:
        """Blocks until the run ends: its result (`stats/result.rs`), or the start-up error."""
        with _translated():
            return _answer(RunResult, self._handle.result(), "run result")


def merge_worker_results(config: RunConfig, results: Sequence[RunResult]) -> RunResult:
    """One result from a scaled-out run's worker results (the core's exact merge)."""
    texts = [r.model_dump_json(exclude_unset=True) for r in results]
    with _translated():
        merged = load_core().merge_worker_results(config.to_core_json(), texts)
    return _answer(RunResult, merged, "merged result")


class Session:
    """One connection for queries outside the measured loop (server statistics, checks);
    `with closing(Session(config)) as session:` closes it after use. `timeout_s`: how long
    opening it and each query may take; past it the session is given up with an error (a
    server that stopped answering never holds the caller)."""

    def __init__(self, config: RunConfig, timeout_s: float | None = None) -> None:
        with _translated():
            self._session = load_core().Session(config.to_core_json(), timeout_s)

    def query(self, sql: str) -> list[Row]:
        """The rows of `sql`, each a list of text values or None."""
        with _translated():
            data = _json(self._session.query(sql), "query")
        return [row for row in data if isinstance(row, list)] if isinstance(data, list) else []

    def close(self) -> None:
        self._session.close()


def histogram_figures(blobs: Sequence[str], quantiles: Sequence[float]) -> HistogramFigures:
    """Decodes the stored histograms (base64 HDR V2 deflate), merges them exactly and reads
    count, min, mean, stddev, max and the values at `quantiles`, as the run itself reports them.
    `ResultsError` when a blob is not such a histogram or was recorded with other settings."""
    with _translated():
        text = load_core().histogram_figures(list(blobs), [float(q) for q in quantiles])
    return _answer(HistogramFigures, text, "histogram figures")


def histogram_counts_above(blobs: Sequence[str], limits_ms: Sequence[float]) -> list[CountsAbove]:
    """Each stored histogram's count and its counts over `limits_ms` (not merged: a capacity
    level judges its seconds one by one)."""
    with _translated():
        text = load_core().histogram_counts_above(list(blobs), [float(x) for x in limits_ms])
    data = _json(text, "histogram counts")
    if not isinstance(data, list):
        raise InternalError("the native histogram counts are not a JSON list")
    return [strict(CountsAbove, item, "histogram counts") for item in data]


def merge_histograms(blobs: Sequence[str]) -> str:
    """One stored histogram (base64 HDR V2 deflate) holding the exact sum of `blobs`."""
    with _translated():
        return str(load_core().merge_histograms(list(blobs)))


def _interruptible(call: Callable[[], str]) -> str:
    """A native call that can take seconds, run so that a signal still stops the command at
    once: from the main thread, the call runs in a worker thread while the main thread waits in
    short steps, so Ctrl-C or SIGTERM interrupts the wait (the worker is abandoned: the process
    is ending). From any other thread, the call runs there."""
    if threading.current_thread() is not threading.main_thread():
        with _translated():
            return call()
    outcome: list[str | BaseException] = []

    def work() -> None:
        try:
            with _translated():
                outcome.append(call())
        except BaseException as exc:  # handed to the main thread as it is
            outcome.append(exc)

    worker = threading.Thread(target=work, name="dbscale-native-call", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.2)
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


def micro_cpu(threads: int, seconds: float) -> CpuScore:
    """Iterations per second of dbscale's CPU kernels on `threads` threads (0: every CPU)."""
    settings = json.dumps({"threads": threads, "seconds": seconds})
    text = _interruptible(lambda: str(load_core().micro_cpu(settings)))
    return _answer(CpuScore, text, "CPU score")


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


def micro_net_rr(addr: str, seconds: float) -> RequestResponse:
    """One-byte request/response against a `micro net` server (latencies in microseconds)."""
    text = _interruptible(lambda: str(load_core().micro_net_rr(addr, seconds)))
    return _answer(RequestResponse, text, "request/response figures")


def micro_net_streams(addr: str, streams: int, seconds: float, buffer_bytes: int) -> Streams:
    """Parallel streams to a `micro net` server: the half-second aggregate series in Gbit/s."""
    text = _interruptible(
        lambda: str(load_core().micro_net_streams(addr, streams, seconds, buffer_bytes))
    )
    return _answer(Streams, text, "stream figures")


def pick_stream_count(
    history: Sequence[tuple[int, float]], threshold: float, cap: int
) -> int | None:
    """The report's stream-count search (the core's rule) on (streams, Gbit/s) steps."""
    found = load_core().pick_stream_count(list(history), threshold, cap)
    return int(found) if found is not None else None
