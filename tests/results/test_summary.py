from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from dbscale.core.result import Interval
from dbscale.results.record import RunRecord
from dbscale.run.console import pgbench_lines, print_summary
from dbscale.run.progress import PlainProgress, RunSlot, progress_line


def _record(fields: dict[str, Any]) -> RunRecord:
    return RunRecord.from_json(fields)


def _interval(fields: dict[str, Any]) -> Interval:
    return Interval.model_validate(fields)


RECORD = {
    "workload": "tpcb",
    "clients": 8,
    "threads": 2,
    "protocol": "prepared",
    "connect": "persistent",
    "rate_tps": None,
    "duration_s": 30.0,
    "transactions": 123456,
    "tps": 4115.2,
    "failed": 2,
    "retried": 0,
    "latency_ms": {"mean": 1.944, "stddev": 0.5, "p50": 1.8, "p95": 3.1, "p99": 4.2},
    "connect_ms": {"count": 8, "mean": 2.5},
    "verdict": {"status": "ok", "message": ""},
}


def test_pgbench_shaped_lines() -> None:
    lines = pgbench_lines(_record(RECORD))
    assert "number of clients: 8" in lines
    assert "number of transactions actually processed: 123456" in lines
    assert "number of failed transactions: 2 (0.002%)" in lines
    assert "latency average = 1.944 ms" in lines
    assert "initial connection time = 2.500 ms" in lines
    assert lines[-1] == "tps = 4115.200000 (without initial connection time)"


def test_scaling_factor_when_the_core_reports_it() -> None:
    assert "scaling factor: 10" in pgbench_lines(
        _record({**RECORD, "workload_params": {"scale": 10}})
    )
    assert not any(line.startswith("scaling factor") for line in pgbench_lines(_record(RECORD)))


def test_per_transaction_connect_includes_reconnection_times() -> None:
    lines = pgbench_lines(_record({**RECORD, "connect": "per-transaction"}))
    assert lines[-1] == "tps = 4115.200000 (including reconnection times)"
    assert not any(line.startswith("initial connection time") for line in lines)


def test_progress_line_like_pgbench() -> None:
    interval = {
        "t_s": 5.0,
        "tps": 1234.5,
        "errors": 0,
        "latency_ms": {"mean": 6.4, "stddev": 1.2},
        "lag_ms": None,
    }
    assert (
        progress_line(_interval(interval))
        == "progress: 5.0 s, 1234.5 tps, lat 6.4 ms stddev 1.2, 0 failed"
    )
    assert progress_line(_interval({**interval, "lag_ms": 0.3})).endswith(", lag 0.3 ms")


def test_plain_progress_prints_one_line_per_interval() -> None:
    out = io.StringIO()
    progress = PlainProgress(Console(file=out, width=200))
    progress.begin(RunSlot("clients=4", 2, 3, 10.0))
    progress.update([_interval({"t_s": 1.0, "tps": 10.0}), _interval({"t_s": 2.0, "tps": 11.0})])
    text = out.getvalue().splitlines()
    assert text[0] == "run 2/3: clients=4, 10 s"
    assert text[1].startswith("progress: 1.0 s, 10.0 tps")
    assert len(text) == 3


def test_summary_table_and_results_path(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    records = [_record({**RECORD, "warmup": True}), _record(RECORD)]
    print_summary(Console(file=out, width=200), records, tmp_path)
    text = out.getvalue()
    assert "warm-up" in text
    assert "4115.2" in text
    assert f"results: {tmp_path}" in text


def test_narrow_tables_wrap_instead_of_cutting_cells_short() -> None:
    from dbscale.results.text_tables import text_table

    table = text_table(["point", "median tps", "p95"], left={"point"})
    keys = [f"clients=2,connect=persistent,tls={tls},pooling=off" for tls in ("disable", "require")]
    for key in keys:
        table.add_row(key, "50812.5", "1.25")
    table.add_row("x" * 70, "1.0", "2.0")
    buffer = io.StringIO()
    Console(file=buffer, width=40, color_system=None).print(table)
    text = buffer.getvalue()
    assert "…" not in text
    for key in keys:  # each setting of each key whole, on some line
        for setting in key.split(","):
            assert setting in text, text
    assert text.count("x") == 70 and text.count("50812.5") == 2, text


def test_column_widths_fit_the_room_text_giving_way_first() -> None:
    from dbscale.results.text_tables import fit_widths

    assert fit_widths([10, 5], [4, 5], 20, [True, False]) == [10, 5]  # all fits
    widths = fit_widths([40, 8, 30], [10, 8, 12], 50, [True, False, False])
    assert sum(widths) <= 50 and widths[1] == 8 and widths[0] >= 10 and widths[2] >= 12
    assert fit_widths([40, 8], [30, 8], 20, [True, False]) == [12, 8]  # numbers kept whole


def test_a_wide_table_never_runs_past_the_terminal() -> None:
    from dbscale.results.text_tables import text_table

    table = text_table([f"column {i}" for i in range(7)], left={"column 0"})
    table.add_row("warehouses_per_vcpu=0.5 [A]", *(["0.002215 [0.001826, 0.002814]"] * 6))
    buffer = io.StringIO()
    Console(file=buffer, width=100, color_system=None).print(table)
    lines = buffer.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 100
    assert buffer.getvalue().count("0.002215") == 6 and "…" not in buffer.getvalue()
    assert buffer.getvalue().count("[0.001826,") == 6  # numbers whole; the key gave way
