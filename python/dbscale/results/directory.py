"""The results directory of one invocation. Every finished run is appended to `runs.jsonl` at once
(flush + fsync), so a crash or Ctrl-C later loses nothing already measured; `summary.json` is
rewritten atomically after each run. No URL is stored with a password in it.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbscale.errors import ResultsError
from dbscale.results.points import flatten
from dbscale.targets.url import redact_url
from dbscale.values import iso_utc

RUNS_FILE = "runs.jsonl"
SUMMARY_FILE = "summary.json"
SUMMARY_CSV_FILE = "summary.csv"
PLAN_FILE = "plan.json"


def default_results_dir(workload: str, now: datetime, root: Path = Path("results")) -> Path:
    """`results/<UTC timestamp>-<workload>`, with a suffix if that already exists."""
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", workload)
    candidate = root / f"{stamp}-{safe}"
    n = 2
    while candidate.exists():
        candidate = root / f"{stamp}-{safe}-{n}"
        n += 1
    return candidate


@dataclass(frozen=True)
class RunMeta:
    """What dbscale adds to the native result of one run."""

    started_at: datetime
    ended_at: datetime
    config: Mapping[str, Any]
    warmup: bool
    dbscale_version: str
    cancelled: bool
    run_id: str = ""
    # Where the run sits in its study: run_key, point_key, point, repetition, warmup_kind, ...
    study: Mapping[str, Any] | None = None


def make_record(native: Mapping[str, Any], meta: RunMeta) -> dict[str, Any]:
    """One line of runs.jsonl: the native result JSON plus dbscale's fields."""
    record = dict(native)
    record.update(
        run_id=meta.run_id or uuid.uuid4().hex,
        started_at=iso_utc(meta.started_at),
        ended_at=iso_utc(meta.ended_at),
        config=_redact_config(meta.config),
        warmup=meta.warmup,
        dbscale_version=meta.dbscale_version,
        cancelled=bool(meta.cancelled or native.get("cancelled", False)),
    )
    record.update(meta.study or {})
    if isinstance(record.get("target"), str):
        record["target"] = redact_url(record["target"])
    return record


def _redact_config(config: Mapping[str, Any]) -> dict[str, Any]:
    data = json.loads(json.dumps(config, default=str))
    target = data.get("target")
    if isinstance(target, dict) and isinstance(target.get("url"), str):
        target["url"] = redact_url(target["url"])
    return dict(data)


class ResultsDir:
    """Writes one invocation's results; created on the first write. `resume` reads the runs
    already there, so the summary covers them too."""

    def __init__(self, path: Path, *, resume: bool = False) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
        if resume:
            if not self.runs_file.is_file():
                raise ResultsError(
                    f"nothing to resume: {self.runs_file} does not exist",
                    "name the results directory of the interrupted study",
                )
            self.records = read_runs(self.runs_file)

    @property
    def runs_file(self) -> Path:
        return self.path / RUNS_FILE

    @property
    def summary_file(self) -> Path:
        return self.path / SUMMARY_FILE

    def _ensure(self) -> None:
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ResultsError(f"cannot create results directory {self.path}: {exc}") from None

    def append(self, record: Mapping[str, Any]) -> None:
        """Appends one run as one JSON line and makes it durable before returning."""
        self._ensure()
        line = json.dumps(record, separators=(",", ":"), default=str) + "\n"
        created = not self.runs_file.exists()
        try:
            with self.runs_file.open("a", encoding="utf-8") as out:
                out.write(line)
                out.flush()
                os.fsync(out.fileno())
            if created:
                _fsync_dir(self.path)
        except OSError as exc:
            raise ResultsError(f"cannot write {self.runs_file}: {exc}") from None
        self.records.append(dict(record))

    def write_summary(
        self,
        extra: Mapping[str, Any] | None = None,
        points: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        """summary.json: one row per run so far, plus the per-point statistics when given, which
        also go to summary.csv (both replaced atomically)."""
        self._ensure()
        summary: dict[str, Any] = {
            "runs": [summary_row(r) for r in self.records],
            **(extra or {}),
        }
        if points is not None:
            summary["points"] = list(points)
            _write_atomic(self.path / SUMMARY_CSV_FILE, points_csv(points))
        _write_atomic(self.summary_file, json.dumps(summary, indent=2, default=str) + "\n")

    def write_plan(self, plan: Mapping[str, Any]) -> None:
        """plan.json: the resolved plan the runs came from (target URLs without passwords)."""
        self._ensure()
        _write_atomic(self.path / PLAN_FILE, json.dumps(plan, indent=2, default=str) + "\n")


def read_runs(path: Path) -> list[dict[str, Any]]:
    """The records of a runs.jsonl; a torn last line (crash mid-write) is skipped."""
    records: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return records


def summary_row(record: Mapping[str, Any]) -> dict[str, Any]:
    latency = record.get("latency_ms") or {}
    verdict = record.get("verdict") or {}
    return {
        "run_id": record.get("run_id"),
        "run_key": record.get("run_key"),
        "point_key": record.get("point_key"),
        "repetition": record.get("repetition"),
        "workload": record.get("workload"),
        "warmup": record.get("warmup", False),
        "cancelled": record.get("cancelled", False),
        "clients": record.get("clients"),
        "threads": record.get("threads"),
        "protocol": record.get("protocol"),
        "connect": record.get("connect"),
        "rate_tps": record.get("rate_tps"),
        "duration_s": record.get("duration_s"),
        "transactions": record.get("transactions"),
        "tps": record.get("tps"),
        "failed": record.get("failed"),
        "latency_ms": {k: latency.get(k) for k in ("mean", "p50", "p95", "p99", "max")},
        "status": verdict.get("status"),
        "limited_by": ((record.get("observe") or {}).get("limited_by") or {}).get("verdict"),
    }


def summary_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [summary_row(r) for r in records]


def points_csv(points: Sequence[Mapping[str, Any]]) -> str:
    """summary.csv: one row per point, nested fields flattened (`tps_median_ci_low`)."""
    rows = [flatten(p) for p in points]
    columns: list[str] = []
    for row in rows:
        columns.extend(c for c in row if c not in columns)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(path)
        _fsync_dir(path.parent)
    except OSError as exc:
        raise ResultsError(f"cannot write {path}: {exc}") from None


def _fsync_dir(directory: Path) -> None:
    """Makes a new or renamed entry in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
