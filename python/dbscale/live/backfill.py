"""`dbscale export openmetrics DIR`: a finished study's seconds as one OpenMetrics file with a
timestamp on every sample, the input `promtool tsdb create-blocks-from openmetrics` turns into
Prometheus blocks, so a study run without `--metrics-addr` can still be put beside the database's
own dashboards. The series are the endpoint's (exposition.py's names and labels): the counters
summed second by second, with the record's total as the last sample (at the run's end when the
seconds leave some out), and each second's throughput and latency percentiles as gauges."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from dbscale.errors import ResultsError
from dbscale.results.directory import read_runs
from dbscale.results.record import RunRecord

RUN_LABELS = ("study", "point", "run", "target", "phase")
COUNTERS = (  # metric, help, the interval's field
    ("dbscale_transactions", "Transactions committed", "transactions"),
    ("dbscale_failures", "Transactions that failed", "failed"),
    ("dbscale_errors", "Errors, each try's", "errors"),
    ("dbscale_retries", "Retries of transactions", "retries"),
)
# prometheus_client's OpenMetrics writer (timestamps on every sample), as a scraper asks for it.
OPENMETRICS = choose_encoder("application/openmetrics-text; version=1.0.0")[0]
QUANTILES = (("0.5", "p50"), ("0.95", "p95"), ("0.99", "p99"))


def _labels(record: RunRecord, study: str) -> list[str]:
    phase = "warmup" if record.warmup else "measured"
    return [record.study or study, record.point_key or "", record.run_key or record.run_id,
            record.target_name or record.target, phase]  # fmt: skip


def _measured_start_s(record: RunRecord) -> float:
    return datetime.fromisoformat(record.started_at).timestamp() + record.ramp_s


class _StudySeconds(Collector):
    def __init__(self, records: Sequence[RunRecord], study: str) -> None:
        self.records, self.study = records, study

    def collect(self) -> Iterator[Metric]:
        for name, text, field in COUNTERS:
            family = CounterMetricFamily(name, text, labels=RUN_LABELS)
            for record in self.records:
                labels, start, total = _labels(record, self.study), _measured_start_s(record), 0
                at_ms = 0
                for interval in record.intervals:  # the drain's too: it is in the totals
                    total += int(getattr(interval, field))
                    # Prometheus keeps milliseconds: the drain, a fraction after the last
                    # second, must not share that second's millisecond (it would be dropped).
                    at_ms = max(round((start + interval.t_s) * 1000), at_ms + 1)
                    family.add_metric(labels, float(total), timestamp=at_ms / 1000)
                final = record.errors.total if field == "errors" else getattr(record, field)
                if final != total:  # what the seconds leave out: the total at the run's end
                    ended_ms = round(datetime.fromisoformat(record.ended_at).timestamp() * 1000)
                    family.add_metric(labels, float(final),
                                      timestamp=max(ended_ms, at_ms + 1) / 1000)  # fmt: skip
            yield family
        tps = GaugeMetricFamily("dbscale_interval_tps", "Each second's transactions per second",
                                labels=RUN_LABELS)  # fmt: skip
        latency = GaugeMetricFamily("dbscale_interval_latency_seconds",
                                    "Each second's latency percentiles (HDR)",
                                    labels=[*RUN_LABELS, "quantile"])  # fmt: skip
        for record in self.records:
            labels, start = _labels(record, self.study), _measured_start_s(record)
            for interval in record.window_intervals:
                tps.add_metric(labels, interval.tps, timestamp=start + interval.t_s)
        for quantile, field in QUANTILES:
            for record in self.records:
                labels, start = _labels(record, self.study), _measured_start_s(record)
                for interval in record.window_intervals:
                    value = getattr(interval.latency_ms, field, None)
                    if value is not None:
                        latency.add_metric([*labels, quantile], value / 1000.0,
                                           timestamp=start + interval.t_s)  # fmt: skip
        yield tps
        yield latency


def export_openmetrics(directory: Path, out: Path) -> int:
    """Writes the study's seconds to `out`; the number of runs in it."""
    runs = directory / "runs.jsonl"
    if not runs.is_file():
        raise ResultsError(f"{directory} has no runs.jsonl",
                           "name a results directory `dbscale run` wrote")  # fmt: skip
    records = [r for r in read_runs(runs) if r.intervals and r.started_at]
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_StudySeconds(records, directory.resolve().name))
    try:
        out.write_bytes(OPENMETRICS(registry))
    except OSError as exc:
        raise ResultsError(f"cannot write {out}: {exc.strerror or exc}",
                           "choose a writable --out") from None  # fmt: skip
    return len(records)
