"""sysbench-shaped output: the interval line and closing block match sysbench 1.0.20's text
character for character (the expected text below is sysbench's own output, numbers and all),
and `--output-format` picks the shape per workload family."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from dbscale.core.result import Interval
from dbscale.modes import WorkloadFamily
from dbscale.plan.sysbench_flags import flag_for
from dbscale.results.record import RunRecord
from dbscale.run.console import print_run, summary_table
from dbscale.run.output_format import OutputFormat, shape_for
from dbscale.run.progress import PlainProgress, RunSlot
from dbscale.run.sysbench_format import final_lines, interval_line


def _record(fields: dict[str, Any]) -> RunRecord:
    return RunRecord.from_json(fields)


def _interval(fields: dict[str, Any]) -> Interval:
    return Interval.model_validate(fields)


# `sysbench oltp_read_write --threads=2 --time=3 run` on MariaDB, 1.0.20 from Debian.
SYSBENCH_BLOCK = """\
SQL statistics:
    queries performed:
        read:                            7742
        write:                           2207
        other:                           1104
        total:                           11053
    transactions:                        551    (182.29 per sec.)
    queries:                             11053  (3656.71 per sec.)
    ignored errors:                      2      (0.66 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          3.0156s
    total number of events:              551

Latency (ms):
         min:                                    0.61
         avg:                                   10.90
         max:                                   76.13
         95th percentile:                       38.94
         sum:                                 6005.90"""

RECORD = {
    "workload": "sysbench:oltp_read_write",
    "duration_s": 3.0156,
    "transactions": 551,
    "tps": 182.29,
    "qps": 3656.71,
    "queries": {"read": 7742, "write": 2207, "other": 1104, "total": 11053},
    "errors": {"total": 2, "by_class": {"deadlock": 2}},
    "latency_ms": {"min": 0.61, "mean": 10.9, "max": 76.13, "p95": 38.94},
    "clients": 2,
    "threads": 2,
    "protocol": "prepared",
    "connect": "persistent",
    "failed": 0,
    "verdict": {"status": "ok", "message": ""},
}
INTERVAL = {
    "t_s": 1.0,
    "transactions": 1234,
    "tps": 1234.56,
    "qps": 24691.0,  # the core's snapshots hold counts; rates are counts over the width
    "queries": {"read": 17284, "write": 4938, "other": 2469, "total": 24691},
    "errors": 0,
    "latency_ms": {"p95": 8.43},
}


def test_final_block_is_sysbenchs_text() -> None:
    assert "\n".join(final_lines(_record(RECORD))) == SYSBENCH_BLOCK


def test_interval_line_is_sysbenchs_text() -> None:
    assert interval_line(_interval(INTERVAL), 8) == (
        "[ 1s ] thds: 8 tps: 1234.56 qps: 24691.00 (r/w/o: 17284.00/4938.00/2469.00) "
        "lat (ms,95%): 8.43 err/s: 0.00 reconn/s: 0.00"
    )
    empty = interval_line(_interval({"t_s": 2.0, "tps": 0.0, "qps": 0.0, "errors": 0}), 1)
    assert empty.startswith("[ 2s ] thds: 1 tps: 0.00 qps: 0.00 (r/w/o: 0.00/0.00/0.00)")


def test_reconnects_are_not_ignored_errors() -> None:
    record = {**RECORD, "errors": {"total": 5, "by_class": {"connection_lost": 2, "deadlock": 3}}}
    lines = final_lines(_record(record))
    assert any(line.startswith("    ignored errors:                      3 ") for line in lines)
    assert any(line.startswith("    reconnects:                          2 ") for line in lines)


def test_auto_picks_the_workload_familys_shape() -> None:
    sysbench, tpcb = WorkloadFamily.SYSBENCH, WorkloadFamily.TPCB
    assert shape_for(OutputFormat.AUTO, sysbench) is OutputFormat.SYSBENCH
    assert shape_for(OutputFormat.AUTO, tpcb) is OutputFormat.PGBENCH
    assert shape_for(OutputFormat.AUTO, WorkloadFamily.TPCC) is OutputFormat.PGBENCH
    assert shape_for(OutputFormat.SYSBENCH, tpcb) is OutputFormat.SYSBENCH
    assert shape_for(OutputFormat.PGBENCH, sysbench) is OutputFormat.PGBENCH


def test_plain_progress_puts_sysbench_lines_on_stdout() -> None:
    err, out = io.StringIO(), io.StringIO()
    progress = PlainProgress(
        Console(file=err, width=200), out=Console(file=out, width=200),
        output_format=OutputFormat.AUTO,
    )  # fmt: skip
    sysbench = WorkloadFamily.SYSBENCH
    progress.begin(
        RunSlot("default #1", 1, 1, 3.0, workload="oltp_read_write", family=sysbench, clients=8)
    )
    progress.update([_interval(INTERVAL)])
    assert out.getvalue().startswith("[ 1s ] thds: 8 tps: 1234.56")
    assert "progress:" not in err.getvalue()
    progress.begin(
        RunSlot("default #1", 1, 1, 3.0, workload="tpcb", family=WorkloadFamily.TPCB, clients=8)
    )
    progress.update([_interval(INTERVAL)])
    assert err.getvalue().splitlines()[-1].startswith("progress: 1.0 s, 1234.6 tps")


def test_run_block_and_table_show_queries() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200)
    print_run(console, _record(RECORD), "default #1", family=WorkloadFamily.SYSBENCH)
    assert SYSBENCH_BLOCK in out.getvalue()
    out.truncate(0)
    print_run(console, _record(RECORD), "default #1", OutputFormat.PGBENCH)
    text = out.getvalue()
    assert "number of queries: 11053 (read 7742, write 2207, other 1104), qps = 3656.710" in text
    assert "SQL statistics" not in text
    Console(file=out, width=200).print(summary_table([_record(RECORD)]))
    assert "qps" in out.getvalue() and "3656.7" in out.getvalue()


def test_sysbench_run_options_name_their_flag() -> None:
    assert flag_for("time") == "-T/--duration (e.g. -T 30s)"
    assert flag_for("mysql-host") is not None and "--target mysql://" in str(flag_for("mysql-host"))
    assert "--clients" in str(flag_for("threads"))
    assert flag_for("tables") is None
