"""What a finished run prints on stdout: a block in pgbench's or sysbench's familiar shape after
each run (output_format.py), and a table of all runs at the end with the results path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from dbscale.run.output_format import OutputFormat, shape_for
from dbscale.run.sysbench_format import final_lines

Record = Mapping[str, Any]


def _f(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{float(value):.{digits}f}"


def pgbench_lines(record: Record) -> list[str]:
    """The lines pgbench users look for (`tps = ... (without initial connection time)`)."""
    transactions = int(record.get("transactions") or 0)
    failed = int(record.get("failed") or 0)
    attempted = transactions + failed
    failed_pct = 100.0 * failed / attempted if attempted else 0.0
    latency = record.get("latency_ms") or {}
    connect = record.get("connect_ms") or {}
    per_transaction = record.get("connect") == "per-transaction"
    params = record.get("workload_params") or {}
    lines = [f"transaction type: {record.get('workload')}"]
    if params.get("scale") is not None:
        lines.append(f"scaling factor: {params['scale']}")
    lines += [
        f"query mode: {record.get('protocol')}",
        f"number of clients: {record.get('clients')}",
        f"number of threads: {record.get('threads')}",
        f"duration: {_f(record.get('duration_s'), 1)} s",
        f"number of transactions actually processed: {transactions}",
        f"number of failed transactions: {failed} ({failed_pct:.3f}%)",
    ]
    if record.get("retried"):
        lines.append(
            f"number of transactions retried: {record['retried']} "
            f"(total retries: {record.get('retries', 0)})"
        )
    queries = record.get("queries") or {}
    if queries.get("total"):
        lines.append(
            f"number of queries: {queries['total']} (read {queries.get('read', 0)}, write "
            f"{queries.get('write', 0)}, other {queries.get('other', 0)}), "
            f"qps = {float(record.get('qps') or 0.0):.3f}"
        )
    lines.append(f"latency average = {_f(latency.get('mean'))} ms")
    if latency.get("stddev") is not None:
        lines.append(f"latency stddev = {_f(latency.get('stddev'))} ms")
    if record.get("rate_tps") is not None and record.get("schedule_lag_ms"):
        lag = record["schedule_lag_ms"]
        lines.append(
            f"rate limit schedule lag: avg {_f(lag.get('mean'))} ms (max {_f(lag.get('max'))} ms)"
        )
    if not per_transaction and connect.get("mean") is not None:
        lines.append(f"initial connection time = {_f(connect.get('mean'))} ms")
    mode = "including reconnection times" if per_transaction else "without initial connection time"
    lines.append(f"tps = {float(record.get('tps') or 0.0):.6f} ({mode})")
    return lines


def print_run(
    console: Console,
    record: Record,
    label: str,
    output_format: OutputFormat = OutputFormat.AUTO,
) -> None:
    """The block after one run, in the shape asked for; a warm-up gets one line."""
    if record.get("warmup"):
        console.print(
            f"warm-up: tps = {float(record.get('tps') or 0.0):.1f} over "
            f"{_f(record.get('duration_s'), 1)} s (recorded, marked warmup)",
            highlight=False,
        )
        return
    console.print(f"[bold]{label}[/bold]")
    sysbench = shape_for(output_format, str(record.get("workload", ""))) is OutputFormat.SYSBENCH
    for line in final_lines(record) if sysbench else pgbench_lines(record):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    verdict = record.get("verdict") or {}
    if verdict.get("status") not in (None, "ok"):
        console.print(
            f"verdict: {verdict.get('status')}: {verdict.get('message', '')}", highlight=False
        )
    console.print()


def summary_table(records: Sequence[Record]) -> Table:
    table = Table(
        title="dbscale results (latency in ms)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
        collapse_padding=True,
    )
    # A study's runs name their point (clients=8,tls=require); a plain run has none to name.
    with_points = any(r.get("point") for r in records)
    for name in ("run", *(("point",) if with_points else ()), "clients", "threads", "tps", "qps",
                 "mean", "p50", "p95", "p99", "failed", "status"):  # fmt: skip
        table.add_column(
            name, justify="left" if name in ("run", "point", "status") else "right", no_wrap=True
        )
    measured = 0
    for record in records:
        if not record.get("warmup"):
            measured += 1
        latency = record.get("latency_ms") or {}
        verdict = record.get("verdict") or {}
        status = "cancelled" if record.get("cancelled") else str(verdict.get("status", "?"))
        point = (str(record.get("point_key") or "-"),) if with_points else ()
        table.add_row(
            "warm-up" if record.get("warmup") else str(measured),
            *point,
            str(record.get("clients")),
            str(record.get("threads")),
            _f(record.get("tps"), 1),
            _f(record.get("qps"), 1),
            _f(latency.get("mean"), 2),
            _f(latency.get("p50"), 2),
            _f(latency.get("p95"), 2),
            _f(latency.get("p99"), 2),
            str(record.get("failed", 0)),
            status,
        )
    return table


def print_summary(console: Console, records: Sequence[Record], results_dir: Path) -> None:
    if records:
        console.print(summary_table(records))
    console.print(f"results: {results_dir}", highlight=False, soft_wrap=True)
