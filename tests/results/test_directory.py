from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dbscale.core.config import TargetConfig, WorkloadConfig, make_run_config
from dbscale.errors import ResultsError
from dbscale.results.directory import (
    ResultsDir,
    RunMeta,
    default_results_dir,
    make_record,
    read_runs,
)
from dbscale.results.record import RunRecord
from dbscale.values import iso_utc

NATIVE = RunRecord.from_json(
    {
        "workload": "tpcb",
        "clients": 2,
        "threads": 2,
        "protocol": "simple",
        "connect": "persistent",
        "tps": 1234.5,
        "transactions": 2469,
        "failed": 0,
        "cancelled": False,
        "latency_ms": {"mean": 1.6, "p50": 1.5, "p95": 2.5, "p99": 3.5, "max": 9.0},
        "target": "postgresql://bob:s3cret@db/app",
        "verdict": {"status": "ok", "message": ""},
    }
)
START = datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
END = datetime(2025, 1, 2, 3, 4, 7, tzinfo=UTC)


def meta(**changes: object) -> RunMeta:
    fields: dict[str, object] = {
        "started_at": START,
        "ended_at": END,
        "config": make_run_config(
            target=TargetConfig(url="postgresql://bob:s3cret@db/app"),
            workload=WorkloadConfig(name="tpcb"),
        ),
        "warmup": False,
        "dbscale_version": "0.1.0",
        "cancelled": False,
    }
    fields.update(changes)
    return RunMeta(**fields)  # type: ignore[arg-type]


def test_record_adds_dbscale_fields_and_redacts() -> None:
    record = make_record(NATIVE, meta(warmup=True))
    assert record.tps == 1234.5
    assert record.warmup is True
    assert record.cancelled is False
    assert record.dbscale_version == "0.1.0"
    assert record.started_at == "2025-01-02T03:04:05.678Z"
    assert record.ended_at == "2025-01-02T03:04:07.000Z"
    assert len(record.run_id) == 32
    assert "s3cret" not in record.to_json()
    assert record.config.target.url == "postgresql://bob@db/app"
    assert record.target == "postgresql://bob@db/app"


def test_cancelled_from_either_side() -> None:
    assert make_record(NATIVE, meta(cancelled=True)).cancelled is True
    cancelled = NATIVE.model_copy(update={"cancelled": True})
    assert make_record(cancelled, meta()).cancelled is True


def test_a_failed_consistency_check_fails_the_run_and_keeps_its_numbers() -> None:
    held = {"ok": True, "warehouses": 1, "seconds": 0.5,
            "conditions": [{"id": "3.3.2.1", "status": "pass"}]}  # fmt: skip
    good = make_record(NATIVE, meta(consistency=held))
    assert good.consistency is not None and good.consistency.ok and good.measured
    failing = {"id": "3.3.2.3", "status": "fail", "violations": 1,
               "examples": ["warehouse 1 district 4"]}  # fmt: skip
    broken = {"ok": False, "conditions": [{"id": "3.3.2.1", "status": "pass"}, failing]}
    bad = make_record(NATIVE, meta(consistency=broken))
    assert bad.verdict.status == "failed" and not bad.measured
    assert bad.verdict.message == "consistency conditions fail after the run: 3.3.2.3"
    assert bad.tps == NATIVE.tps
    assert bad.consistency is not None and bad.consistency.failed == ["3.3.2.3"]
    unknown = make_record(NATIVE, meta(consistency={"ok": False, "error": "server gone"}))
    assert "could not finish: server gone" in unknown.verdict.message
    # Nothing is known of the data: the run keeps its own verdict.
    assert unknown.verdict.status == NATIVE.verdict.status and unknown.measured
    assert RunRecord.from_json(json.loads(bad.to_json())).consistency == bad.consistency


def test_append_is_durable_and_line_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    results = ResultsDir(tmp_path / "out" / "nested")
    results.append(make_record(NATIVE, meta()))
    assert synced, "append must fsync before returning"
    results.append(make_record(NATIVE.model_copy(update={"clients": 4}), meta()))
    lines = results.runs_file.read_text().splitlines()
    assert len(lines) == 2
    assert [json.loads(line)["clients"] for line in lines] == [2, 4]


def test_summary_lists_every_run(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path)
    results.append(make_record(NATIVE, meta(warmup=True)))
    results.append(make_record(NATIVE, meta()))
    results.write_summary({"note": "x"})
    summary = json.loads(results.summary_file.read_text())
    assert [row["warmup"] for row in summary["runs"]] == [True, False]
    assert summary["runs"][1]["latency_ms"]["p99"] == 3.5
    assert summary["runs"][1]["status"] == "ok"
    assert summary["note"] == "x"
    assert not list(tmp_path.glob(".*.tmp"))


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"run_id": "a"}) + "\n" + '{"run_id": "b')
    assert [r.run_id for r in read_runs(path)] == ["a"]


def test_unwritable_directory_is_a_results_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ResultsError):
        ResultsDir(blocker / "sub").append(make_record(NATIVE, meta()))


def test_default_dir_is_timestamped_and_unique(tmp_path: Path) -> None:
    now = datetime(2025, 6, 7, 8, 9, 10, tzinfo=UTC)
    first = default_results_dir("tpcb", now, root=tmp_path)
    assert first.name == "20250607T080910Z-tpcb"
    first.mkdir()
    assert default_results_dir("tpcb", now, root=tmp_path).name == "20250607T080910Z-tpcb-2"
    assert default_results_dir("a/b c", now, root=tmp_path).name == "20250607T080910Z-a_b_c"


def test_iso_utc_converts_timezones() -> None:
    from datetime import timedelta, timezone

    local = datetime(2025, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    assert iso_utc(local) == "2025-01-01T10:00:00.000Z"


def test_another_tools_runs_file_is_neither_reported_nor_appended_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dbscale.cli.app import run_cli

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "runs.jsonl").write_text('{"tps": 5.0, "tool": "other"}\n')
    with pytest.raises(ResultsError, match="line 1: not a dbscale run record"):
        read_runs(foreign / "runs.jsonl")
    assert run_cli(["report", str(foreign)]) != 0
    err = capsys.readouterr().err
    assert "error: " in err and "not a dbscale run record" in err and "hint: " in err
    code = run_cli(["run", "tpcb", "--target", "postgresql://u@127.0.0.1:1/db",
                    "--resume", str(foreign), "--dry-run"])  # fmt: skip
    assert code != 0 and "not a dbscale run record" in capsys.readouterr().err
    assert (foreign / "runs.jsonl").read_text() == '{"tps": 5.0, "tool": "other"}\n'
