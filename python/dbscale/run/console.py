"""What a finished run prints on stdout: a block in pgbench's or sysbench's familiar shape after
each run (output_format.py); at the end a table of all runs, the per-point statistics and the
results path.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from dbscale.modes import WorkloadFamily
from dbscale.results.points import Interval, PointSummary
from dbscale.results.record import RunRecord
from dbscale.results.text_tables import text_table
from dbscale.run.output_format import OutputFormat, shape_for
from dbscale.run.sysbench_format import final_lines


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _latency(record: RunRecord, name: str) -> float | None:
    return record.latency_ms.percentile(name) if record.latency_ms is not None else None


def pgbench_lines(record: RunRecord) -> list[str]:
    """The lines pgbench users look for (`tps = ... (without initial connection time)`)."""
    transactions, failed = record.transactions, record.failed
    attempted = transactions + failed
    failed_pct = 100.0 * failed / attempted if attempted else 0.0
    per_transaction = record.connect == "per-transaction"
    scripts = record.scripts
    kind = record.workload
    if scripts:
        kind = scripts[0].name if len(scripts) == 1 else "multiple scripts"
    lines = [f"transaction type: {kind}"]
    if record.workload_params.get("scale") is not None:
        lines.append(f"scaling factor: {record.workload_params['scale']}")
    lines += [
        f"query mode: {record.protocol}",
        f"number of clients: {record.clients}"
        + (f" ({record.clients_connected} connected)" if record.clients_refused else ""),
        f"number of threads: {record.threads}",
    ]
    per_client = record.per_client_transactions
    if per_client is not None:
        wanted = per_client * record.clients
        lines += [
            f"number of transactions per client: {per_client}",
            f"number of transactions actually processed: {transactions}/{wanted}",
        ]
    else:
        lines += [
            f"duration: {record.duration_s:.1f} s",
            f"number of transactions actually processed: {transactions}",
        ]
    lines.append(f"number of failed transactions: {failed} ({failed_pct:.3f}%)")
    if record.retried:
        lines.append(
            f"number of transactions retried: {record.retried} (total retries: {record.retries})"
        )
    lines += latency_limit_lines(record)
    queries = record.queries
    if queries.total:
        lines.append(
            f"number of queries: {queries.total} (read {queries.read}, write {queries.write}, "
            f"other {queries.other}), qps = {record.qps:.3f}"
        )
    lines.append(f"latency average = {_f(_latency(record, 'mean'))} ms")
    if _latency(record, "stddev") is not None:
        lines.append(f"latency stddev = {_f(_latency(record, 'stddev'))} ms")
    lag = record.schedule_lag_ms
    if record.rate_tps is not None and lag is not None:
        lines.append(f"rate limit schedule lag: avg {_f(lag.mean)} ms (max {_f(lag.max)} ms)")
    if not per_transaction and record.connect_ms is not None and record.connect_ms.mean is not None:
        lines.append(f"initial connection time = {_f(record.connect_ms.mean)} ms")
    mode = "including reconnection times" if per_transaction else "without initial connection time"
    lines.append(f"tps = {record.tps:.6f} ({mode})")
    if len(scripts) > 1:
        lines += script_lines(record)
    if record.commands:
        lines += command_lines(record)
    return lines


def latency_limit_lines(record: RunRecord) -> list[str]:
    """pgbench -L's lines: the arrivals skipped (under a rate) and the transactions over it."""
    limit = record.latency_limit_ms
    if limit is None:
        return []
    lines = []
    if record.rate_tps is not None:
        scheduled = record.transactions + record.failed + record.skipped
        share = 100.0 * record.skipped / scheduled if scheduled else 0.0
        lines.append(f"number of transactions skipped: {record.skipped} ({share:.3f}%)")
    share = 100.0 * record.over_latency_limit / record.transactions if record.transactions else 0.0
    lines.append(
        f"number of transactions above the {limit:.1f} ms latency limit: "
        f"{record.over_latency_limit}/{record.transactions} ({share:.3f}%)"
    )
    return lines


def transaction_log_lines(record: RunRecord) -> list[str]:
    """Where the per-transaction log (pgbench -l) is, and a write error that cut it short."""
    log = record.transaction_log
    if log is None:
        return []
    files = f", {log.files} files: its threads' add .1, .2, ..." if log.files > 1 else ""
    lines = [f"transaction log: {log.lines} lines in {log.path}{files}"]
    return lines + ([f"warning: {log.error}"] if log.error else [])


def command_lines(record: RunRecord) -> list[str]:
    """pgbench `-r`'s table: each command's mean latency and failures, script by script."""
    lines = ["statement latencies in milliseconds and failures:"]
    several = len({c.script for c in record.commands}) > 1
    shown = ""
    for command in record.commands:
        if several and command.script != shown:
            lines.append(f" {command.script}:")
            shown = command.script
        mean = f"{command.mean_ms:.3f}" if command.mean_ms is not None else "-"
        lines.append(f"  {mean:>12} {command.failures:>11}  {command.command}")
    return lines


def script_lines(record: RunRecord) -> list[str]:
    """pgbench's block per script of a weighted mix: its weight, its share, its latency."""
    scripts = record.scripts
    total_weight = sum(s.weight for s in scripts) or 1
    all_done = sum(t.transactions for t in record.transaction_types.values()) or 1
    lines: list[str] = []
    for number, script in enumerate(scripts, 1):
        kind = record.transaction_types.get(script.name)
        done = kind.transactions if kind else 0
        failed = kind.failed if kind else 0
        tps = done / record.duration_s if record.duration_s else 0.0
        latency = kind.latency_ms if kind else None
        target_pct = 100 * script.weight / total_weight
        lines += [
            f"SQL script {number}: {script.name}",
            f" - weight: {script.weight} (targets {target_pct:.1f}% of total)",
            f" - {done} transactions ({100 * done / all_done:.1f}% of total, tps = {tps:.6f})",
            f" - number of failed transactions: {failed} "
            f"({100 * failed / (done + failed) if done + failed else 0:.3f}%)",
            f" - latency average = {_f(latency.mean if latency else None)} ms",
            f" - latency stddev = {_f(latency.stddev if latency else None)} ms",
        ]
    return lines


def print_run(
    console: Console,
    record: RunRecord,
    label: str,
    output_format: OutputFormat = OutputFormat.AUTO,
    family: WorkloadFamily | None = None,
) -> None:
    """The block after one run, in the shape asked for (`family`: the workload's, whose own
    shape `auto` means); a warm-up gets one line, and so does
    every run on a terminal unless a shape is asked for (the blocks would scroll a study away)."""
    if compact_output(console, output_format) and not record.warmup:
        console.print(run_line(record, label), highlight=False, markup=False, soft_wrap=True)
        for line in transaction_log_lines(record):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        return
    if record.warmup:
        console.print(
            f"warm-up: tps = {record.tps:.1f} over {record.duration_s:.1f} s "
            "(recorded, marked warmup)",
            highlight=False,
        )
        return
    console.print(f"[bold]{label}[/bold]")
    sysbench = shape_for(output_format, family) is OutputFormat.SYSBENCH
    for line in final_lines(record) if sysbench else pgbench_lines(record):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    extra = transaction_log_lines(record) + tpcc_lines(record) + host_lines(record)
    for line in extra + consistency_lines(record):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    if record.verdict.status != "ok":
        console.print(
            f"verdict: {record.verdict.status}: {record.verdict.message}", highlight=False
        )
    for line in error_message_lines(record):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    console.print()


def error_message_lines(record: RunRecord) -> list[str]:
    """Each error class with its first message, as the server (or the script) worded it."""
    messages = record.errors.messages
    if not messages:
        return []
    return ["first error of each class:"] + [
        f"  {cls} ({record.errors.by_class.get(cls, 0)}): {text}" for cls, text in messages.items()
    ]


def compact_output(console: Console, output_format: OutputFormat) -> bool:
    """One line per finished run: on a terminal, unless a tool's shape is asked for."""
    if output_format is OutputFormat.LINES:
        return True
    return output_format is OutputFormat.AUTO and console.is_terminal


def run_line(record: RunRecord, label: str) -> str:
    """One finished run in a line: `clients=8 #2: tps 1234.5, p95 3.4 ms, 0 failed: ok`."""
    p95 = _latency(record, "p95")
    figures = f"tps {record.tps:,.1f}, p95 {_f(p95)} ms, {record.failed} failed"
    if record.retries:
        figures += f", {record.retries} retries"
    if record.tpcc is not None:
        rule = "pass" if record.tpcc.passed else "FAIL"
        figures = f"tpmC {record.tpcc.tpmc:,.0f} ({record.tpcc.rule.name} rule: {rule}), {figures}"
    if record.limited_by is not None and record.limited_by.verdict:
        figures += f", limited by {record.limited_by.verdict}"
        if record.limited_by.host_warning:
            figures += " (host shared with other processes)"
    status = record.status
    tail = status if status == "ok" else f"{status}: {record.verdict.message}"
    return f"{label}: {figures}: {tail}"


def consistency_lines(record: RunRecord) -> list[str]:
    """The consistency check after the run (plan `prepare.check: run`), when there was one."""
    c = record.consistency
    if c is None:
        return []
    if c.error:
        return [f"consistency check after the run could not finish: {c.error}"]
    if c.ok:
        skipped = sum(x.status == "skip" for x in c.conditions)
        note = f", {skipped} skipped" if skipped else ""
        return [f"consistency: {len(c.conditions)} conditions checked after the run, all hold"
                f"{note} ({c.seconds:.1f} s)"]  # fmt: skip
    lines = []
    for condition in c.conditions:
        if condition.status == "fail":
            lines.append(f"consistency FAIL {condition.id}: {condition.violations} violation(s)")
            lines.extend(f"    {example}" for example in condition.examples)
    return lines


def tpcc_lines(record: RunRecord) -> list[str]:
    """TPC-C's headline: tpmC, efficiency (flagged without waits), the pass rule's verdict and
    any audit outside its tolerance."""
    t = record.tpcc
    if t is None:
        return []
    # Efficiency is tpmC against 12.86 per warehouse, the most keying and think times allow:
    # without them (nowait) it is no figure at all, so it is left out.
    efficiency = f", efficiency {t.efficiency_pct:.1f}%" if t.efficiency_meaningful else ""
    mode = "wait" if t.wait else "nowait"
    new_order = record.transaction_types.get("new_order")
    p = new_order.latency_ms if new_order is not None else None
    lines = [
        f"tpmC = {t.tpmc:.1f} ({mode}, {t.active_warehouses} of {t.warehouses} warehouses active; "
        f"{t.rolled_back_new_orders} rolled-back New-Orders included){efficiency}",
    ]
    if p is not None:
        lines.append(
            f"new_order latency (ms): avg {_f(p.mean)} p50 {_f(p.p50)} p90 {_f(p.p90)} "
            f"p95 {_f(p.p95)} p99 {_f(p.p99)} max {_f(p.max)}"
        )
    rule = t.rule.name
    verdict = "PASS" if t.passed else "FAIL: " + "; ".join(t.reasons)
    lines.append(f"tpcc {rule} rule: {verdict}")
    lines.extend(f"warning: {w}" for w in t.warnings)
    if record.ramp_s > 0:
        lines.append(
            f"ramp: {record.ramp_s:.0f} s unmeasured ({record.ramp_transactions} transactions)"
        )
    return lines


def host_lines(record: RunRecord) -> list[str]:
    """Connections per host when a target has several."""
    if len(record.connections_by_host) < 2:
        return []
    spread = ", ".join(f"{h.host}: {h.connections}" for h in record.connections_by_host)
    return [f"connections by host: {spread}"]


def summary_table(records: Sequence[RunRecord]) -> Table:
    # A study's runs name their point (clients=8,tls=require); a plain run has none to name.
    with_points = any(r.point for r in records)
    table = text_table(
        ("run", *(("point",) if with_points else ()), "clients", "threads", "tps", "qps", "mean",
         "p50", "p95", "p99", "failed", "status"),
        left={"run", "point", "status"},
        title="dbscale results (latency in ms)",
    )  # fmt: skip
    measured = 0
    for record in records:
        if not record.warmup:
            measured += 1
        point = (record.point_key or "-",) if with_points else ()
        table.add_row(
            "warm-up" if record.warmup else str(measured),
            *point,
            str(record.clients),
            str(record.threads),
            _f(record.tps, 1),
            _f(record.qps, 1),
            *(_f(_latency(record, name), 2) for name in ("mean", "p50", "p95", "p99")),
            str(record.failed),
            record.status,
        )
    return table


def print_summary(console: Console, records: Sequence[RunRecord], results_dir: Path) -> None:
    if records:
        console.print(summary_table(records))
    console.print(f"results: {results_dir}", highlight=False, soft_wrap=True)


def _interval(ci: Interval | None, digits: int = 1) -> str:
    if ci is None:
        return "-"
    return f"[{_f(ci.low, digits)}, {_f(ci.high, digits)}]"


def points_table(points: Sequence[PointSummary]) -> Table:
    table = text_table(
        ("point", "n", "median tps", "95% CI", "mean tps", "t-CI", "CV %", "p95", "p99", "notes"),
        left={"point", "notes"},
        title="per point (TPS over measured runs; latency in ms from merged histograms)",
    )
    for point in points:
        tps = point.tps
        table.add_row(
            point.point_key,
            str(point.runs),
            _f(tps.median, 1),
            _interval(tps.median_ci),
            _f(tps.mean, 1),
            _interval(tps.mean_ci),
            _f(tps.cv_pct, 2),
            _f(point.latency_ms.p95, 2),
            _f(point.latency_ms.p99, 2),
            "; ".join(point.flags),
        )
    return table


def print_points(console: Console, points: Sequence[PointSummary]) -> None:
    """The per-point table, when some point has more than one measured run."""
    if any(p.runs > 1 for p in points):
        console.print(points_table(points))
