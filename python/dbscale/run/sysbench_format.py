"""Lines in sysbench 1.0.20's shape, for people and scripts that parse sysbench output: the
per-interval report (`--report-interval`) and the final statistics block, with sysbench's labels,
column widths and number formats.

What differs, by necessity: `reconn/s` in interval lines is always 0.00 (an interval snapshot
counts reconnects among its errors, in `err/s`); the final block's percentile is read from dbscale's
HDR histogram (3 significant digits) rather than sysbench's 1024-bucket one; "Threads fairness" is
left out (dbscale keeps no per-client counts).
"""

from __future__ import annotations

from dbscale.core.result import Interval, LatencyFigures
from dbscale.results.record import RunRecord

PERCENTILE = 95


def _width_s(interval: Interval) -> float:
    """The interval's length, recovered from a count and its rate (snapshots carry both)."""
    if interval.qps > 0 and interval.queries.total > 0:
        return interval.queries.total / interval.qps
    if interval.tps > 0 and interval.transactions > 0:
        return interval.transactions / interval.tps
    return 1.0


def _ms(latency: LatencyFigures | None, name: str) -> float:
    value = latency.percentile(name) if latency is not None else None
    return value or 0.0


def interval_line(interval: Interval, threads: int) -> str:
    """`[ 1s ] thds: 8 tps: 1234.56 qps: 24691.20 (r/w/o: 17283.84/4938.24/2469.12) lat (ms,95%):
    8.43 err/s: 0.00 reconn/s: 0.00`, from one interval snapshot."""
    width = _width_s(interval)
    queries = interval.queries
    read, write, other = (queries.read / width, queries.write / width, queries.other / width)
    p95 = interval.latency_ms.p95 if interval.latency_ms is not None else None
    return (
        f"[ {interval.t_s:.0f}s ] thds: {threads} "
        f"tps: {interval.tps:4.2f} qps: {interval.qps:4.2f} "
        f"(r/w/o: {read:4.2f}/{write:4.2f}/{other:4.2f}) "
        f"lat (ms,{PERCENTILE}%): {p95 or 0.0:4.2f} "
        f"err/s: {interval.errors / width:4.2f} reconn/s: {0.0:4.2f}"
    )


def _counted(label: str, count: int, per_s: float) -> str:
    return f"    {label + ':':<37}{count:<6} ({per_s:.2f} per sec.)"


def final_lines(record: RunRecord) -> list[str]:
    """sysbench's closing statistics for one run: SQL statistics, general statistics, latency."""
    duration_s = record.duration_s or 1e-9
    queries = record.queries
    read, write, other = queries.read, queries.write, queries.other
    total = queries.total or read + write + other
    transactions = record.transactions
    reconnects = record.errors.by_class.get("connection_lost", 0)
    ignored = max(record.errors.total - reconnects, 0)
    latency = record.latency_ms
    mean_ms = _ms(latency, "mean")
    return [
        "SQL statistics:",
        "    queries performed:",
        f"        read:                            {read}",
        f"        write:                           {write}",
        f"        other:                           {other}",
        f"        total:                           {total}",
        _counted("transactions", transactions, record.tps),
        _counted("queries", total, record.qps or total / duration_s),
        _counted("ignored errors", ignored, ignored / duration_s),
        _counted("reconnects", reconnects, reconnects / duration_s),
        "",
        "General statistics:",
        f"    total time:                          {duration_s:.4f}s",
        f"    total number of events:              {transactions}",
        "",
        "Latency (ms):",
        f"         min: {_ms(latency, 'min'):39.2f}",
        f"         avg: {mean_ms:39.2f}",
        f"         max: {_ms(latency, 'max'):39.2f}",
        f"         {PERCENTILE}th percentile: {_ms(latency, f'p{PERCENTILE}'):27.2f}",
        f"         sum: {mean_ms * transactions:39.2f}",
    ]
