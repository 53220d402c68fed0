from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from dbscale.results.record import Interval, RunRecord
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
