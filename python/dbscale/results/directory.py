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
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dbscale.core.config import RunConfig
from dbscale.core.result import RunResult
from dbscale.errors import ResultsError
from dbscale.files import append_durable, json_value, space_hint, write_atomic
from dbscale.observe.section import ObserveSection
from dbscale.redaction import redact_url
from dbscale.results.fault_windows import FaultEvent, NodeRoles, describe, fault_windows
from dbscale.results.micro_records import MICRO_FILE
from dbscale.results.outages import find_gaps, outage_verdict
from dbscale.results.points import PointSummary, flatten
from dbscale.results.record import (
    RUNS_SCHEMA_VERSION,
    ConsistencySection,
    RunRecord,
    StudyPlace,
)
from dbscale.values import JsonObject, iso_utc

RUNS_FILE = "runs.jsonl"
SUMMARY_FILE = "summary.json"
SUMMARY_CSV_FILE = "summary.csv"
PLAN_FILE = "plan.json"
SUMMARY_SCHEMA_VERSION = 1  # summary.json's shape (results/summary_file.py, schemas/)


class StoredStatistics(BaseModel):
    """The plan's statistics settings as plan.json keeps them (None: the defaults)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    confidence: float | None = None
    cv_threshold_pct: float | None = None
    noise_threshold_pct: float | None = None


class StoredPlan(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    name: str | None = None
    statistics: StoredStatistics = Field(default_factory=StoredStatistics)


class PlanFile(BaseModel):
    """plan.json as the report and `compare` read it: the resolved plan's name and statistics
    settings (the rest is kept as written)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    plan: StoredPlan = Field(default_factory=StoredPlan)


def read_plan_file(directory: Path) -> PlanFile:
    """`directory/plan.json`, or an empty one when it is missing or not a plan file."""
    try:
        return PlanFile.model_validate_json((directory / PLAN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return PlanFile()


def default_results_dir(workload: str, now: datetime, root: Path = Path("results")) -> Path:
    """`results/<UTC timestamp>-<workload>`, with a suffix if that already exists."""
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", workload)[:80]  # a file name has 255 bytes at most
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
    config: RunConfig
    warmup: bool
    dbscale_version: str
    cancelled: bool
    run_id: str = ""
    study: StudyPlace | None = None  # where the run sits in its study
    observe: ObserveSection | Mapping[str, object] | None = None  # the observer's section
    # The check after the run (prepare.check); a mapping is read as one.
    consistency: ConsistencySection | Mapping[str, Any] | None = None
    count_outages: bool = False  # statistics.include_outages: outage runs count in the point
    faults: Sequence[FaultEvent] = ()  # the run's fault steps as they ran
    node_roles: Sequence[NodeRoles] = ()  # its cluster's roles as it began and ended


def make_record(native: RunResult, meta: RunMeta) -> RunRecord:
    """One line of runs.jsonl: the native result plus dbscale's fields, no password in it."""
    fields: JsonObject = {
        **native.model_dump(mode="json", exclude_unset=True),
        "schema_version": RUNS_SCHEMA_VERSION,
        "run_id": meta.run_id or uuid.uuid4().hex,
        "started_at": iso_utc(meta.started_at),
        "ended_at": iso_utc(meta.ended_at),
        "config": meta.config.redacted(),
        "warmup": meta.warmup,
        "dbscale_version": meta.dbscale_version,
        "cancelled": meta.cancelled or native.cancelled,
        **(meta.study.model_dump(mode="json") if meta.study is not None else {}),
    }
    if native.target:
        fields["target"] = redact_url(native.target)
    if meta.observe is not None:
        fields["observe"] = ObserveSection.model_validate(meta.observe)
    if meta.consistency is not None:
        consistency = ConsistencySection.model_validate(meta.consistency)
        fields["consistency"] = consistency
        if not consistency.ok and not consistency.unfinished:
            # Data that breaks its conditions makes the run's numbers untrustworthy.
            failed = ", ".join(consistency.failed)
            message = f"consistency conditions fail after the run: {failed}"
            fields["verdict"] = {"status": "failed", "message": message}
    record = RunRecord.from_json(fields, "the run's result")
    # What the per-second intervals and the check add, in one more pass over the fields.
    added: JsonObject = {}
    if meta.node_roles:
        added["node_roles"] = [roles.model_dump(mode="json") for roles in meta.node_roles]
    if meta.faults:
        # Planned faults: their gaps are what the run measures, not an outage of it.
        windows = fault_windows(record, meta.faults)
        added["faults"] = [event.model_dump(mode="json") for event in meta.faults]
        added["fault_windows"] = [window.model_dump(mode="json") for window in windows]
        told = "; ".join(describe(window) for window in windows)
        added["verdict"] = {
            "status": record.verdict.status,
            "message": f"{record.verdict.message}; faults: {told}",
        }
    elif record.verdict.status != "failed":
        gaps = find_gaps(record)
        if gaps.outages:
            added["outages"] = [asdict(o) for o in gaps.outages]
            added["outages_counted"] = meta.count_outages
            added["verdict"] = outage_verdict(record, gaps.outages)
        if gaps.stalls:
            added["stalls"] = [asdict(s) for s in gaps.stalls]
    if record.consistency is not None and record.consistency.unfinished:
        # Not a verdict on the data: the run keeps its own, with the unchecked data noted.
        verdict = added.get("verdict") or record.verdict.model_dump(mode="json")
        assert isinstance(verdict, dict)
        note = f"the consistency check after the run could not finish: {record.consistency.error}"
        added["verdict"] = {**verdict, "message": f"{verdict['message']}; {note}"}
    if added:
        record = RunRecord.from_json({**fields, **added}, "the run's result")
    return record


# Where runs write their per-transaction logs (pgbench -l).
TRANSACTION_LOG_DIR = "transactions"


class ResultsDir:
    """Writes one invocation's results; created on the first write. `resume` reads the runs
    already there, so the summary covers them too, after setting aside a torn last line (a
    crash or a full disk mid-write) so the next record is not appended onto it. Without `resume`
    a directory that already holds runs is refused: two studies' runs are never mixed."""

    def __init__(self, path: Path, *, resume: bool = False, repair: bool = True) -> None:
        self.path = path
        self.records: list[RunRecord] = []
        self.repaired: str | None = None  # what was set aside, for the console
        micro = path / MICRO_FILE
        if resume:
            started = (self.runs_file, micro, path / PLAN_FILE)  # plan.json: a study began
            if not any(f.is_file() for f in started):
                raise ResultsError(
                    f"nothing to resume: {self.runs_file} does not exist",
                    "name the results directory of the interrupted study",
                )
            if repair:
                notes = [set_aside_torn_tail(f) for f in (self.runs_file, micro) if f.is_file()]
                self.repaired = "; ".join(n for n in notes if n) or None
            if self.runs_file.is_file():
                self.records = read_runs(self.runs_file)
        elif any(f.is_file() and f.stat().st_size > 0 for f in (self.runs_file, micro)):
            raise ResultsError(
                f"{path} already holds the runs of a study ({self.runs_file})",
                f"finish or extend that study with --resume {path} (the same plan; a larger "
                "--repeat adds runs), or give a new --out directory",
            )

    @property
    def runs_file(self) -> Path:
        return self.path / RUNS_FILE

    @property
    def summary_file(self) -> Path:
        return self.path / SUMMARY_FILE

    def transaction_log(self, run_key: str) -> Path:
        """Where run `run_key` writes its per-transaction log (pgbench -l): `transactions/` in
        the results directory, a file named after the run (its threads add `.N`)."""
        folder = self.path / TRANSACTION_LOG_DIR
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ResultsError(f"cannot create {folder}: {exc}", space_hint(exc, folder)) from None
        return folder / (re.sub(r"[^A-Za-z0-9_.=,+-]+", "_", run_key).strip("_") + ".log")

    def _ensure(self) -> None:
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ResultsError(f"cannot create results directory {self.path}: {exc}") from None

    def append(self, record: RunRecord) -> None:
        """Appends one run as one JSON line and makes it durable before returning."""
        self._ensure()
        append_durable(self.runs_file, record.to_json())  # a torn line: set_aside_torn_tail
        self.records.append(record)

    def write_summary(
        self,
        extra: Mapping[str, Any] | None = None,
        points: Sequence[PointSummary] | None = None,
    ) -> None:
        """summary.json: one row per run so far, plus the per-point statistics when given, which
        also go to summary.csv (both replaced atomically)."""
        self._ensure()
        summary: JsonObject = {
            "schema_version": SUMMARY_SCHEMA_VERSION,
            "runs": [summary_row(r) for r in self.records],
            **(extra or {}),
        }
        if points is not None:
            rows = [p.to_json() for p in points]
            summary["points"] = rows
            write_atomic(self.path / SUMMARY_CSV_FILE, points_csv(rows))
        write_atomic(self.summary_file, json.dumps(summary, indent=2, default=str) + "\n")

    def write_plan(self, plan: BaseModel) -> None:
        """plan.json: the resolved plan the runs came from (target URLs without passwords)."""
        self._ensure()
        content = json.dumps(plan.model_dump(mode="json"), indent=2, default=str)
        write_atomic(self.path / PLAN_FILE, content + "\n")


RUNS_HINT = "runs.jsonl holds one JSON object per line, as `dbscale run` writes it; is this it?"


def read_runs(path: Path) -> list[RunRecord]:
    """The records of a runs.jsonl. A torn last line (no newline: a crash or a full disk
    mid-write) is not a record and is skipped; any other line that is not a record is an error
    naming it, never silently dropped."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResultsError(f"cannot read {path}: {exc.strerror or exc}", RUNS_HINT) from None
    records: list[RunRecord] = []
    for number, raw in enumerate(data.split(b"\n")[:-1], start=1):
        if not raw.strip():
            continue
        try:
            parsed = json_value(raw)
        except ValueError as exc:
            raise ResultsError(f"{path}, line {number}: {exc}", RUNS_HINT) from None
        if not (isinstance(parsed, dict) and parsed.get("run_id")):
            # Every record dbscale writes has its run id: this file is someone else's, and
            # neither a report of it nor a run appended to it would mean anything.
            raise ResultsError(
                f"{path}, line {number}: not a dbscale run record (it has no run_id)",
                "name a results directory `dbscale run` wrote; another tool's runs.jsonl is "
                "not read, nor appended to",
            )
        records.append(RunRecord.from_json(parsed, f"{path}, line {number}"))
    return records


def set_aside_torn_tail(path: Path) -> str | None:
    """Moves a torn last line (bytes after the last newline) to `runs.jsonl.torn` and cuts the
    file back to its last complete record; says what it did (None when the file was whole)."""
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    if not tail:
        return None
    aside = path.with_name(path.name + ".torn")
    try:
        with aside.open("ab") as out:
            out.write(tail + b"\n")
            out.flush()
            os.fsync(out.fileno())
        with path.open("r+b") as runs:
            runs.truncate(cut)
            runs.flush()
            os.fsync(runs.fileno())
    except OSError as exc:
        raise ResultsError(
            f"cannot repair {path}: {exc.strerror or exc}", space_hint(exc, path.parent)
        ) from None
    complete = data[:cut].count(b"\n")
    return (
        f"{path.name} ended in a torn record ({len(tail)} bytes, written when a crash or a full "
        f"disk cut a write short): set aside in {aside.name}; resuming after the "
        f"{complete} complete lines before it"
    )


SUMMARY_FIELDS = {
    "run_id", "run_key", "point_key", "repetition", "workload", "warmup", "cancelled", "clients",
    "threads", "protocol", "connect", "rate_tps", "duration_s", "transactions", "tps", "failed",
}  # fmt: skip


def summary_row(record: RunRecord) -> JsonObject:
    """A run's line in summary.json."""
    row: JsonObject = record.model_dump(mode="json", include=SUMMARY_FIELDS)
    latency = record.latency_ms
    row["latency_ms"] = {
        k: latency.percentile(k) if latency else None for k in ("mean", "p50", "p95", "p99", "max")
    }
    row["status"] = record.verdict.status
    row["limited_by"] = record.limited_by.verdict if record.limited_by else None
    return row


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
