"""Lines in sysbench 1.0.20's shape, for people and scripts that parse sysbench output: the
per-interval report (`--report-interval`) and the final statistics block, with sysbench's labels,
column widths and number formats.

What differs, by necessity: `reconn/s` in interval lines is always 0.00 (an interval snapshot
counts reconnects among its errors, in `err/s`); the final block's percentile is read from dbscale's
HDR histogram (3 significant digits) rather than sysbench's 1024-bucket one; "Threads fairness" is
left out (dbscale keeps no per-client counts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Record = Mapping[str, Any]
Interval = Mapping[str, Any]
PERCENTILE = 95


def _num(value: Any) -> float:
    return float(value) if value is not None else 0.0


def _width_s(interval: Interval) -> float:
    """The interval's length, recovered from a count and its rate (snapshots carry both)."""
    queries = interval.get("queries") or {}
    if _num(interval.get("qps")) > 0 and _num(queries.get("total")) > 0:
        return _num(queries["total"]) / _num(interval["qps"])
    if _num(interval.get("tps")) > 0 and _num(interval.get("transactions")) > 0:
        return _num(interval["transactions"]) / _num(interval["tps"])
    return 1.0


def interval_line(interval: Interval, threads: int) -> str:
    """`[ 1s ] thds: 8 tps: 1234.56 qps: 24691.20 (r/w/o: 17283.84/4938.24/2469.12) lat (ms,95%):
    8.43 err/s: 0.00 reconn/s: 0.00`, from one interval snapshot."""
    width = _width_s(interval)
    queries = interval.get("queries") or {}
    rate = {k: _num(queries.get(k)) / width for k in ("read", "write", "other")}
    latency = interval.get("latency_ms") or {}
    return (
        f"[ {_num(interval.get('t_s')):.0f}s ] thds: {threads} "
        f"tps: {_num(interval.get('tps')):4.2f} qps: {_num(interval.get('qps')):4.2f} "
        f"(r/w/o: {rate['read']:4.2f}/{rate['write']:4.2f}/{rate['other']:4.2f}) "
        f"lat (ms,{PERCENTILE}%): {_num(latency.get(f'p{PERCENTILE}')):4.2f} "
        f"err/s: {_num(interval.get('errors')) / width:4.2f} reconn/s: {0.0:4.2f}"
    )


def _counted(label: str, count: int, per_s: float) -> str:
    return f"    {label + ':':<37}{count:<6} ({per_s:.2f} per sec.)"


def final_lines(record: Record) -> list[str]:
    """sysbench's closing statistics for one run: SQL statistics, general statistics, latency."""
    duration_s = _num(record.get("duration_s")) or 1e-9
    queries = record.get("queries") or {}
    read, write, other = (int(queries.get(k) or 0) for k in ("read", "write", "other"))
    total = int(queries.get("total") or read + write + other)
    transactions = int(record.get("transactions") or 0)
    errors = record.get("errors") or {}
    reconnects = int((errors.get("by_class") or {}).get("connection_lost", 0))
    ignored = max(int(errors.get("total") or 0) - reconnects, 0)
    latency = record.get("latency_ms") or {}
    mean_ms = _num(latency.get("mean"))
    return [
        "SQL statistics:",
        "    queries performed:",
        f"        read:                            {read}",
        f"        write:                           {write}",
        f"        other:                           {other}",
        f"        total:                           {total}",
        _counted("transactions", transactions, _num(record.get("tps"))),
        _counted("queries", total, _num(record.get("qps")) or total / duration_s),
        _counted("ignored errors", ignored, ignored / duration_s),
        _counted("reconnects", reconnects, reconnects / duration_s),
        "",
        "General statistics:",
        f"    total time:                          {duration_s:.4f}s",
        f"    total number of events:              {transactions}",
        "",
        "Latency (ms):",
        f"         min: {_num(latency.get('min')):39.2f}",
        f"         avg: {mean_ms:39.2f}",
        f"         max: {_num(latency.get('max')):39.2f}",
        f"         {PERCENTILE}th percentile: {_num(latency.get(f'p{PERCENTILE}')):27.2f}",
        f"         sum: {mean_ms * transactions:39.2f}",
    ]
