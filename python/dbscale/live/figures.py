"""What the metrics endpoint serves, kept as the study reports it: one series of figures per run
(labelled study, point, run, target, phase), fed each second from the run's intervals and set
exactly from its record when it is kept, and the study's progress. Reads come from the HTTP
server's thread, writes from the study's: a lock keeps each read whole."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from dbscale import core
from dbscale.core.result import Interval
from dbscale.results.record import RunRecord
from dbscale.run.watchers import RunLabels

# The latency histograms' upper bounds in seconds: 1-2-5 steps from 100 us to 100 s (documented
# in docs/watching.md; fixed, so series from different runs and studies add up).
LATENCY_BOUNDS_S: tuple[float, ...] = (
    *(round(m * 10.0**e, 6) for e in range(-4, 2) for m in (1, 2, 5)),
    100.0,
)
_BOUNDS_MS = tuple(bound * 1000.0 for bound in LATENCY_BOUNDS_S)


@dataclass(frozen=True)
class LatencyBuckets:
    """A Prometheus histogram's figures: cumulative counts per bound (`le`), count and sum."""

    cumulative: tuple[int, ...] = (0,) * len(LATENCY_BOUNDS_S)
    count: int = 0
    sum_s: float = 0.0

    def plus(self, other: LatencyBuckets) -> LatencyBuckets:
        counts = tuple(a + b for a, b in zip(self.cumulative, other.cumulative, strict=True))
        return LatencyBuckets(counts, self.count + other.count, self.sum_s + other.sum_s)


def buckets_of(histogram: str, mean_ms: float | None) -> LatencyBuckets:
    """A stored HDR histogram as buckets: exact counts at each bound (at HDR's 3 significant
    digits), the sum as its count times its mean."""
    if not histogram:
        return LatencyBuckets()
    [counts] = core.histogram_counts_above([histogram], _BOUNDS_MS)
    cumulative = tuple(counts.count - above for above in counts.above)
    return LatencyBuckets(cumulative, counts.count, counts.count * (mean_ms or 0.0) / 1000.0)


def _second_buckets(interval: Interval) -> LatencyBuckets | None:
    if interval.detail is None or not interval.detail.histogram:
        return None
    mean = interval.latency_ms.mean if interval.latency_ms is not None else None
    return buckets_of(interval.detail.histogram, mean)


@dataclass
class TypeFigures:
    transactions: int = 0
    failed: int = 0
    latency: LatencyBuckets = field(default_factory=LatencyBuckets)


@dataclass
class RunSeries:
    """One run's figures: live from its intervals, exact from its record once kept."""

    labels: RunLabels
    active: bool = True
    transactions: int = 0
    failed: int = 0
    errors: int = 0
    retries: int = 0
    failovers: int = 0
    latency: LatencyBuckets = field(default_factory=LatencyBuckets)
    by_node: dict[str, int] = field(default_factory=dict)
    clients_connected: int = 0
    lag_s: float | None = None
    types: dict[str, TypeFigures] = field(default_factory=dict)  # latency: from the record
    error_classes: dict[str, int] = field(default_factory=dict)
    cancelled: bool = False
    server_cpu_cores: float | None = None  # the observer's, from the record
    wait_shares: dict[str, float] = field(default_factory=dict)  # active samples by wait class
    limited_by: str | None = None
    seconds: list[Interval] = field(default_factory=list)  # without their histograms
    events: list[tuple[float, str]] = field(default_factory=list)  # (s into the window, note)
    began: float = field(default_factory=time.monotonic)

    def add(self, interval: Interval, buckets: LatencyBuckets | None) -> None:
        """One second; `buckets`: its histogram's, decoded (None when it came without one)."""
        if not self.seconds:  # the window's start, as the core counts it (the ramp before it)
            self.began = time.monotonic() - interval.t_s - self.labels.ramp_s
        self.seconds.append(interval.model_copy(update={"detail": None}))
        self.transactions += interval.transactions
        self.failed += interval.failed
        self.errors += interval.errors
        self.retries += interval.retries
        self.failovers += interval.failovers
        # one node: the target itself, so per-node views hold every target
        counts = interval.by_node or [interval.transactions]
        names = self.labels.nodes or (self.labels.target,)
        for index, count in enumerate(counts):
            name = names[index] if index < len(names) else str(index)
            self.by_node[name] = self.by_node.get(name, 0) + count
        for name, count in interval.by_type.items():
            self.types.setdefault(name, TypeFigures()).transactions += count
        for name, count in interval.failed_by_type.items():
            self.types.setdefault(name, TypeFigures()).failed += count
        for error_class, count in interval.errors_by_class.items():
            self.error_classes[error_class] = self.error_classes.get(error_class, 0) + count
        if interval.clients_connected is not None:
            self.clients_connected = interval.clients_connected
        self.lag_s = interval.lag_ms / 1000.0 if interval.lag_ms is not None else None
        if buckets is not None:
            self.latency = self.latency.plus(buckets)

    def settle(self, record: RunRecord) -> None:
        """The record's totals replace the sums of seconds: what was scraped last equals what
        runs.jsonl holds."""
        self.active = False
        self.transactions, self.failed, self.retries = (
            record.transactions, record.failed, record.retries,
        )  # fmt: skip
        self.errors, self.failovers = record.errors.total, record.failovers
        mean = record.latency_ms.mean if record.latency_ms is not None else None
        self.latency = buckets_of(record.histogram, mean)
        self.types = {
            name: TypeFigures(kind.transactions, kind.failed, buckets_of(
                kind.histogram, kind.latency_ms.mean if kind.latency_ms is not None else None))
            for name, kind in record.transaction_types.items()
        }  # fmt: skip
        self.error_classes = dict(record.errors.by_class)
        if record.nodes:
            self.by_node = {f"n{i + 1}": n.transactions for i, n in enumerate(record.nodes)}
        else:
            self.by_node = {self.labels.target: record.transactions}
        if record.clients_connected is not None:
            self.clients_connected = record.clients_connected
        self.cancelled = record.cancelled
        observed = record.observe
        if observed is not None:
            means = observed.resources.mean if observed.resources is not None else {}
            parts = [means.get(f"server_cpu_{kind}_cores") for kind in ("user", "system")]
            if all(isinstance(p, int | float) for p in parts):
                self.server_cpu_cores = float(sum(p for p in parts if p is not None))
            self.wait_shares = dict(observed.waits.classes) if observed.waits is not None else {}
            self.limited_by = observed.limited_by.verdict if observed.limited_by else None


@dataclass(frozen=True)
class StudyState:
    """Where the study stands: measured runs done and planned, its remaining time."""

    name: str = ""
    results: str = ""
    runs_done: int = 0
    runs_total: int = 0
    eta_s: float | None = None
    ended: bool = False


NOTES_KEPT = 40  # the live page's last messages


class StudyFigures:
    """A StudyWatcher keeping every run's series and the study's state."""

    def __init__(self, name: str, results: str) -> None:
        self.lock = threading.Lock()
        self.state = StudyState(name=name, results=results)
        self.runs: list[RunSeries] = []
        self.notes: deque[str] = deque(maxlen=NOTES_KEPT)

    def run_began(self, labels: RunLabels) -> None:
        with self.lock:
            for run in self.runs:
                run.active = False
            self.runs.append(RunSeries(labels))
            self.state = replace(self.state, runs_done=labels.runs_done,
                                 runs_total=labels.runs_total, eta_s=labels.eta_s)  # fmt: skip

    def intervals(self, intervals: Sequence[Interval]) -> None:
        if not intervals or not self.runs:
            return
        decoded = [_second_buckets(interval) for interval in intervals]  # outside the lock
        with self.lock:
            for interval, buckets in zip(intervals, decoded, strict=True):
                self.runs[-1].add(interval, buckets)

    def note(self, message: str) -> None:
        """A message of the study's; during a run it is one of the run's events (a fault step's
        `fault: ...` among them), at its time into the measured window."""
        with self.lock:
            self.notes.append(message)
            run = self.runs[-1] if self.runs else None
            if run is not None and run.active:
                at = time.monotonic() - run.began - run.labels.ramp_s
                run.events.append((round(at, 2), message))

    def run_kept(self, record: RunRecord) -> None:
        series = self.runs[-1] if self.runs else None
        if series is None or series.labels.run != record.run_key:
            return
        with self.lock:
            series.settle(record)
            self.state = replace(self.state, runs_done=series.labels.runs_done + 1)

    def end(self) -> None:
        with self.lock:
            for run in self.runs:
                run.active = False
            self.state = replace(self.state, ended=True, eta_s=0.0)

    def snapshot(self) -> tuple[StudyState, list[RunSeries]]:
        """A consistent copy for one scrape (a run's seconds and events are only appended to,
        so their copies are of the lists as they are now)."""
        with self.lock:
            return self.state, [replace(run, by_node=dict(run.by_node),
                                        types={k: replace(v) for k, v in run.types.items()},
                                        error_classes=dict(run.error_classes),
                                        wait_shares=dict(run.wait_shares),
                                        seconds=list(run.seconds), events=list(run.events))
                                for run in self.runs]  # fmt: skip

    def eta_now(self) -> float | None:
        """The study's time to go: its estimate when the current run began, less the time since."""
        with self.lock:
            eta, run = self.state.eta_s, self.runs[-1] if self.runs else None
            if eta is None or run is None or not run.active or self.state.ended:
                return eta
            return max(0.0, eta - (time.monotonic() - run.began))

    def last_notes(self) -> list[str]:
        with self.lock:
            return list(self.notes)
