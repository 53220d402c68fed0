"""Per-point statistics, computed once per point and used as they are by summary.json and
summary.csv, the console, `compare`, the cost tables and the report: the median TPS with its
distribution-free interval (when there are enough runs for one), the mean with its t-interval,
standard deviation, CV, min and max; latency percentiles read from the merged histograms of all
runs (never averaged) and the spread of per-run p95/p99; and the flags a reader must see: too few
runs, a CV above the threshold, runs that never reached steady state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from dbscale import core
from dbscale.core.answers import HistogramFigures
from dbscale.core.result import LatencyFigures
from dbscale.results.cost import CostFigures, TpmFigures
from dbscale.results.record import RunRecord
from dbscale.stats.confidence import (
    ConfidenceInterval,
    mean_t_ci,
    median_order_statistic_ci,
    min_runs_for_median_ci,
    spread,
)
from dbscale.stats.steady_state import steady_state
from dbscale.values import AxisValue

MIN_RUNS_WARNING = 4  # below this not even a large difference can be told apart at 5%
# The percentiles every summary reports, with the names runs use (`latency_ms.p95`, ...).
PERCENTILES = {"p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99, "p999": 0.999}
RUN_SPREAD_PERCENTILES = ("mean", "p50", "p95", "p99")


@dataclass(frozen=True)
class SummarySettings:
    confidence: float = 0.95
    cv_threshold_pct: float = 5.0


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Interval(_Model):
    low: float
    high: float
    confidence: float
    method: str  # "order-statistic" or "student-t"

    @classmethod
    def of(cls, interval: ConfidenceInterval | None) -> Interval | None:
        return cls(**asdict(interval)) if interval is not None else None

    @classmethod
    def of_nonnegative(cls, interval: ConfidenceInterval | None) -> Interval | None:
        """A quantity that cannot be negative (throughput): the interval's low end at 0 at least
        (a Student-t interval of a few spread-out runs can reach below zero)."""
        found = cls.of(interval)
        return found.model_copy(update={"low": max(found.low, 0.0)}) if found else None


class ThroughputSummary(_Model):
    """Per-run throughput across a point's measured runs (TPS, or tpmC)."""

    median: float | None = None
    median_ci: Interval | None = None
    mean: float | None = None
    mean_ci: Interval | None = None
    stddev: float | None = None
    cv_pct: float | None = None
    min: float | None = None
    max: float | None = None

    @property
    def ci(self) -> Interval | None:
        """The median's interval when there is one, else the mean's."""
        return self.median_ci or self.mean_ci


class RunRange(_Model):
    min: float | None = None
    max: float | None = None


class RunSteadyState(_Model):
    status: str
    cutoff_s: float | None


class SteadyStateSummary(_Model):
    runs_without: list[str] = Field(default_factory=list)
    per_run: list[RunSteadyState] = Field(default_factory=list)


class PointSummary(_Model):
    """One point's statistics over its measured runs; `tpm` and `cost` when its target's size
    or prices are known (results/cost.py)."""

    point_key: str
    point: dict[str, AxisValue] = Field(default_factory=dict)
    target: str | None = None
    workload: str = ""
    runs: int = 0
    run_ids: list[str] = Field(default_factory=list)
    tps: ThroughputSummary = Field(default_factory=ThroughputSummary)
    tpmc: ThroughputSummary | None = None  # TPC-C: New-Orders per minute
    latency_ms: LatencyFigures = Field(default_factory=LatencyFigures)
    per_run_latency_ms: dict[str, RunRange] = Field(default_factory=dict)
    per_run_latency_cv_pct: dict[str, float | None] = Field(default_factory=dict)
    transaction_types: dict[str, LatencyFigures] = Field(default_factory=dict)
    steady_state: SteadyStateSummary = Field(default_factory=SteadyStateSummary)
    flags: list[str] = Field(default_factory=list)
    tpm: TpmFigures | None = None
    cost: CostFigures | None = None

    @property
    def throughput(self) -> ThroughputSummary:
        """The headline throughput: tpmC for TPC-C, else TPS."""
        return self.tpmc if self.tpmc is not None else self.tps

    def to_json(self) -> dict[str, JsonValue]:
        """summary.json's entry; `tpmc`, `tpm` and `cost` only when known."""
        unknown = {name for name in ("tpmc", "tpm", "cost") if getattr(self, name) is None}
        data: dict[str, JsonValue] = self.model_dump(mode="json", exclude=unknown)
        return data


@dataclass
class FigureCache:
    """Merged-histogram figures by the runs they merge, so rewriting the summary after each
    run decodes only the point that changed."""

    figures: dict[tuple[str, ...], HistogramFigures] = field(default_factory=dict)

    def latency(self, blobs: Sequence[str], key: tuple[str, ...]) -> LatencyFigures:
        if key not in self.figures:
            self.figures[key] = core.histogram_figures(blobs, list(PERCENTILES.values()))
        return latency_figures(self.figures[key])


def latency_figures(figures: HistogramFigures) -> LatencyFigures:
    """A merged histogram's figures in a run summary's shape."""
    percentiles = dict(zip(PERCENTILES, figures.values, strict=False))
    return LatencyFigures(
        count=figures.count, min=figures.min, mean=figures.mean, stddev=figures.stddev,
        max=figures.max, **percentiles,
    )  # fmt: skip


def run_steady_state(record: RunRecord) -> RunSteadyState:
    tps = [interval.tps for interval in record.window_intervals]
    state = steady_state(tps, record.interval_s)
    return RunSteadyState(status=state.status, cutoff_s=state.cutoff_s)


def summarize_points(
    records: Sequence[RunRecord],
    settings: SummarySettings | None = None,
    cache: FigureCache | None = None,
) -> list[PointSummary]:
    """One summary per point, in the order points first appear."""
    groups: dict[str, list[RunRecord]] = {}
    for record in records:
        if record.warmup_kind == "data":
            continue
        groups.setdefault(record.group_key, []).append(record)
    return [summarize_point(key, runs, settings, cache) for key, runs in groups.items()]


def throughput_summary(values: Sequence[float], confidence: float) -> ThroughputSummary:
    described = spread(values)
    if described is None:
        return ThroughputSummary()
    return ThroughputSummary(
        median=described.median,
        median_ci=Interval.of(median_order_statistic_ci(values, confidence)),
        mean=described.mean,
        mean_ci=Interval.of_nonnegative(mean_t_ci(values, confidence)),
        stddev=described.stddev,
        cv_pct=described.cv_pct,
        min=described.min,
        max=described.max,
    )


def summarize_point(
    key: str,
    records: Sequence[RunRecord],
    settings: SummarySettings | None = None,
    cache: FigureCache | None = None,
) -> PointSummary:
    """The statistics of one point from all its runs (warm-ups and failures are left out)."""
    settings = settings or SummarySettings()
    cache = cache or FigureCache()
    measured = [r for r in records if r.measured]
    first = (measured or list(records))[0]
    tpmc = [r.tpmc for r in measured]
    steady = [run_steady_state(r) for r in measured]
    tps = throughput_summary([r.tps for r in measured], settings.confidence)
    return PointSummary(
        point_key=key,
        point=dict(first.point),
        target=first.target_name,
        workload=first.workload,
        runs=len(measured),
        run_ids=[r.run_id for r in measured],
        tps=tps,
        tpmc=(
            throughput_summary([t for t in tpmc if t is not None], settings.confidence)
            if measured and all(t is not None for t in tpmc)
            else None
        ),
        latency_ms=_merged_latency(measured, cache),
        per_run_latency_ms={name: _run_range(measured, name) for name in RUN_SPREAD_PERCENTILES},
        per_run_latency_cv_pct={
            name: _run_cv_pct(measured, name) for name in RUN_SPREAD_PERCENTILES
        },
        transaction_types=_per_type(measured, cache),
        steady_state=SteadyStateSummary(
            runs_without=[
                r.run_id for r, s in zip(measured, steady, strict=True) if s.status == "none"
            ],
            per_run=steady,
        ),
        flags=_flags(records, measured, tps, steady, settings),
    )


def _flags(
    records: Sequence[RunRecord],
    measured: Sequence[RunRecord],
    tps: ThroughputSummary,
    steady: Sequence[RunSteadyState],
    settings: SummarySettings,
) -> list[str]:
    flags: list[str] = []
    need = min_runs_for_median_ci(settings.confidence)
    n = len(measured)
    if n < need:
        flags.append(
            f"{n} run{'s' if n != 1 else ''}: a {settings.confidence:.0%} CI for the median "
            f"needs at least {need}"
        )
    if 0 < n < MIN_RUNS_WARNING:
        flags.append(f"fewer than {MIN_RUNS_WARNING} runs: too few to detect a difference")
    if tps.cv_pct is not None and tps.cv_pct > settings.cv_threshold_pct:
        flags.append(f"CV {tps.cv_pct:.1f}% above {settings.cv_threshold_pct:g}%")
    unsteady = sum(1 for s in steady if s.status == "none")
    if unsteady:
        flags.append(f"{unsteady} run(s) never reached steady state (MSER-5)")
    warmups = [r for r in records if r.warmup]
    if any(run_steady_state(r).status == "none" for r in warmups):
        flags.append("the warm-up ended before throughput settled (MSER-5): lengthen it")
    weakened = [r for r in measured if any(e.weakened for e in r.faults)]
    if weakened:
        flags.append(f"{len(weakened)} run(s) committed asynchronously after a promotion left no "
                     "standby: a weaker durability than the others'")  # fmt: skip
    excluded = [r for r in records if not r.warmup and not r.measured]
    if excluded:
        kinds = sorted({r.status for r in excluded})
        flags.append(f"{len(excluded)} {' or '.join(kinds)} run(s) left out")
    return flags


def _merged_latency(records: Sequence[RunRecord], cache: FigureCache) -> LatencyFigures:
    blobs = [r.histogram for r in records if r.histogram]
    if not blobs:
        return LatencyFigures()
    return cache.latency(blobs, tuple(r.run_id for r in records if r.histogram))


def _run_values(records: Sequence[RunRecord], name: str) -> list[float]:
    values = [r.latency_ms.percentile(name) if r.latency_ms else None for r in records]
    return [v for v in values if v is not None]


def _run_range(records: Sequence[RunRecord], name: str) -> RunRange:
    values = _run_values(records, name)
    return RunRange(min=min(values) if values else None, max=max(values) if values else None)


def _run_cv_pct(records: Sequence[RunRecord], name: str) -> float | None:
    described = spread(_run_values(records, name))
    return described.cv_pct if described is not None else None


def _per_type(records: Sequence[RunRecord], cache: FigureCache) -> dict[str, LatencyFigures]:
    names: list[str] = []
    for record in records:
        names.extend(n for n in record.transaction_types if n not in names)
    out: dict[str, LatencyFigures] = {}
    for name in names:
        histograms = [(r.run_id, r.type_histograms().get(name)) for r in records]
        blobs = [blob for _, blob in histograms if blob]
        key = (name, *(run_id for run_id, blob in histograms if blob))
        out[name] = cache.latency(blobs, key) if blobs else LatencyFigures()
    return out


Cell = str | int | float | bool | None  # one value of a flat (CSV, DataFrame) row
FlatRow = dict[str, Cell]


def flatten(row: Mapping[str, object], prefix: str = "") -> FlatRow:
    """A nested summary row as CSV columns: `tps_median_ci_low`, `point_clients`, ..."""
    flat: FlatRow = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if key in ("run_ids", "per_run", "transaction_types"):
            continue
        if key.endswith("_ci") and value is None:
            flat[f"{name}_low"] = flat[f"{name}_high"] = None
        elif key.endswith("_ci") and isinstance(value, Mapping):
            flat[f"{name}_low"], flat[f"{name}_high"] = (
                _cell(value.get("low")),
                _cell(value.get("high")),
            )
        elif isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}_"))
        elif isinstance(value, list):
            flat[name] = "; ".join(str(v) for v in value)
        else:
            flat[name] = _cell(value)
    return flat


def _cell(value: object) -> Cell:
    return value if value is None or isinstance(value, str | int | float | bool) else str(value)
