"""One line of runs.jsonl as a typed record: the native run result (`crates/dbscale-core/src/
stats/result.rs`, field for field), what dbscale adds (run id, times, the redacted configuration,
version), where the run sits in its study, and the observation's section. Records are parsed here
when they are read and built here when they are written; everything after works on `RunRecord`.

Reading is tolerant: fields a record lacks take their defaults (older result directories, or a
field a later version added), and fields this version does not know are kept as they were, so a
record read and written again is unchanged (`to_json` writes only the fields the record has).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from dbscale.core.answers import CheckReport
from dbscale.core.config import RunConfig, ScriptSource
from dbscale.core.result import RunResult
from dbscale.errors import ResultsError
from dbscale.observe.section import LimitedBy, ObserveSection
from dbscale.results.fault_windows import FaultEvent, FaultWindow, NodeRoles
from dbscale.scaleout.messages import WorkerEntry
from dbscale.values import AxisValue


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class ConsistencyCondition(_Part):
    id: str = ""
    status: str = ""  # pass | fail | skip
    violations: int = 0
    examples: list[str] = Field(default_factory=list)
    note: str = ""


class ConsistencySection(_Part):
    """The consistency check run after the run (plan `prepare.check: run`): `ok` when every
    condition held; `error` when the check itself could not run."""

    ok: bool = False
    warehouses: int = 0
    seconds: float = 0.0
    conditions: list[ConsistencyCondition] = Field(default_factory=list)
    error: str = ""

    @property
    def failed(self) -> list[str]:
        return [c.id for c in self.conditions if c.status == "fail"]

    @property
    def unfinished(self) -> bool:
        """The check could not run to its end: nothing is known of the data."""
        return bool(self.error)


def consistency_section(report: CheckReport) -> ConsistencySection:
    """A check report (the core's answer) as a run record's `consistency` section."""
    return ConsistencySection(
        ok=report.ok,
        warehouses=report.warehouses,
        seconds=report.seconds,
        conditions=[
            ConsistencyCondition(id=c.id, status=c.status, violations=c.violations,
                                 examples=list(c.examples), note=c.note)
            for c in report.conditions
        ],
    )  # fmt: skip


class StudyPlace(_Part):
    """Where a run sits in its study, as its record keeps it."""

    run_key: str
    point_key: str
    point: dict[str, AxisValue]
    point_fingerprint: str
    repetition: int
    warmup_kind: str | None  # None (measured), "point" or "data"
    target_name: str
    target_info: dict[str, JsonValue]
    study: str | None


class OutageSection(_Part):
    """A stretch of a run in which no transaction completed (results/outages.py)."""

    start_s: float = 0.0
    length_s: float = 0.0
    errors: int = 0


RUNS_SCHEMA_VERSION = 1  # raised when a field changes meaning or is taken away


class RunRecord(RunResult):
    """One run as runs.jsonl holds it: the native result, then what dbscale adds."""

    # What dbscale adds.
    schema_version: int | None = None  # RUNS_SCHEMA_VERSION when written (schemas/runs.json)
    run_id: str = ""
    started_at: str = ""
    ended_at: str = ""
    config: RunConfig | None = None  # the resolved configuration, its URLs redacted
    warmup: bool = False
    dbscale_version: str = ""
    # Where the run sits in its study.
    run_key: str | None = None
    point_key: str | None = None
    point: dict[str, AxisValue] = Field(default_factory=dict)
    point_fingerprint: str | None = None
    repetition: int | None = None
    warmup_kind: str | None = None  # None (measured), "point" or "data"
    target_name: str | None = None
    target_info: dict[str, JsonValue] = Field(default_factory=dict)
    study: str | None = None
    observe: ObserveSection | None = None
    consistency: ConsistencySection | None = None
    outages: list[OutageSection] | None = None  # results/outages.py
    outages_counted: bool = False  # the plan's statistics.include_outages when it was recorded
    stalls: list[OutageSection] | None = None  # results/outages.py: counted, with a warning
    # A scaled-out run (dbscale/scaleout): each worker's host, share, totals, start skew,
    # histogram; `worker_lost` when one died or stopped answering (the run failed; --resume
    # runs it again).
    workers: list[WorkerEntry] = Field(default_factory=list)
    config_workers: int | None = None
    worker_lost: bool = False
    # A run with fault steps on its cluster's nodes: what each did, and what it cost the run.
    faults: list[FaultEvent] = Field(default_factory=list)
    fault_windows: list[FaultWindow] = Field(default_factory=list)
    node_roles: list[NodeRoles] = Field(default_factory=list)  # as the run began and ended

    @classmethod
    def from_json(cls, data: Any, where: str = "a record") -> RunRecord:
        """A parsed runs.jsonl line; `ResultsError` naming `where` when it is not a record."""
        if not isinstance(data, dict):
            raise ResultsError(
                f"{where} is not a JSON object",
                "runs.jsonl holds one JSON object per line, as `dbscale run` writes it",
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"])
            raise ResultsError(
                f"{where}: field {field}: {first['msg']}",
                "runs.jsonl holds records as `dbscale run` writes them; was it edited?",
            ) from None

    def to_json(self) -> str:
        """The runs.jsonl line (without its newline): the fields the record has, as it has them."""
        return json.dumps(self.model_dump(mode="json", exclude_unset=True), separators=(",", ":"))

    @property
    def measured(self) -> bool:
        """Counts in statistics: not a warm-up, not cancelled, not failed."""
        if self.verdict.status == "outage" and not self.outages_counted:
            return False
        return not self.warmup and not self.cancelled and self.verdict.status != "failed"

    @property
    def group_key(self) -> str:
        """The point the run belongs to; runs recorded before studies existed group by clients."""
        return self.point_key or f"clients={self.clients}"

    @property
    def interval_s(self) -> float:
        """The width of the run's per-second intervals (1 s for records without a config)."""
        return self.config.interval_s if self.config is not None else 1.0

    @property
    def scripts(self) -> list[ScriptSource]:
        """A script workload's mix as it ran (empty for other workloads)."""
        return list(self.config.workload.scripts) if self.config is not None else []

    @property
    def per_client_transactions(self) -> int | None:
        """A counted run's transactions per client (pgbench -t); None for a timed run."""
        return self.config.transactions if self.config is not None else None

    @property
    def limited_by(self) -> LimitedBy | None:
        return self.observe.limited_by if self.observe is not None else None
