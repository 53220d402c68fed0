"""The schema of a plan document (docs/plans.md): targets, workloads, load settings, the matrix,
repetitions, warm-up, cooldown, order, data preparation and statistics. Strict pydantic models
(`extra="forbid"`): an unknown key or a wrong type is refused before anything runs. The target
model is meant to grow (instance metadata, prices, lifecycle hooks) without changing the rest.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from dbscale.core.config import (
    MAX_CLIENTS,
    RunSettings,
    Seconds,
    SecondsOrZero,
)
from dbscale.micro.settings import MicroSettings
from dbscale.modes import QueryProtocol, TlsMode, WorkloadFamily
from dbscale.plan.capacity_plan import CapacityPlan
from dbscale.plan.faults import FaultStep
from dbscale.plan.published import Published
from dbscale.plan.threshold_plan import ThresholdSettings
from dbscale.scaleout.settings import ScaleOut
from dbscale.targets.spec import NAME_PATTERN, TargetEntry
from dbscale.targets.url import on_this_machine
from dbscale.values import ParamValue


def _on_off(value: Any) -> Any:
    if isinstance(value, str) and value.lower() in ("on", "off", "true", "false", "yes", "no"):
        return value.lower() in ("on", "true", "yes")
    return value


MAX_REPEAT = 1_000
MAX_WARMUP_RUNS = 100
Switch = Annotated[bool, BeforeValidator(_on_off)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Transport(StrEnum):
    """How the client reaches a PostgreSQL target: TCP, or its Unix socket."""

    TCP = "tcp"
    UNIX = "unix"


class ScriptEntry(_Strict):
    """One script of the `script` workload: a pgbench script file (relative to the plan) or a
    built-in (`tpcb`, `tpcb-simple-update`, `tpcb-select-only`), with its weight in the mix."""

    file: str | None = Field(default=None, min_length=1)
    builtin: str | None = Field(default=None, min_length=1)
    weight: int = Field(default=1, ge=0, le=2**32 - 1)

    @model_validator(mode="after")
    def _one_source(self) -> ScriptEntry:
        if (self.file is None) == (self.builtin is None):
            raise ValueError("a script is a `file` or a `builtin`, one of them")
        return self


class WorkloadEntry(_Strict):
    """A workload from `dbscale workloads` and its parameters; the `script` workload also has
    its scripts and the variables its clients start with (pgbench `--define`)."""

    name: str = Field(min_length=1)
    params: dict[str, ParamValue] = Field(default_factory=dict)
    label: str | None = Field(default=None, pattern=NAME_PATTERN)
    scripts: list[ScriptEntry] = Field(default_factory=list)
    defines: dict[str, ParamValue] = Field(default_factory=dict)

    @property
    def display(self) -> str:
        return self.label or self.name


class LoadSettings(RunSettings):
    """How each run loads the target: the run settings (declared once, in core/config.py) and
    the plan's own (how to reach the target). Every field can also be a matrix axis, named as a
    plan names it (`duration`, `rate`), and written under that name (plan.json)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True
    )

    # None: the workload family's own default (see `default_protocol`).
    protocol: QueryProtocol | None = None  # type: ignore[assignment]
    tls: TlsMode | None = None
    transport: Transport = Transport.TCP
    pooling: Switch = False
    # pgbench -l and --sampling-rate: each run's per-transaction log, in the results directory.
    log: Switch = False
    sampling_rate: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)

    @model_validator(mode="after")
    def _sampling_needs_a_log(self) -> LoadSettings:
        if self.sampling_rate is not None and not self.log:
            raise ValueError("sampling_rate samples the transaction log: set log: true (-l)")
        return self


# The load settings by the names plans use (`duration`), and each one's field (`duration_s`).
LOAD_FIELD_BY_NAME = {
    **{plan: core for core, plan in RunSettings.plan_names().items()},
    **{name: name for name in LoadSettings.model_fields if name not in RunSettings.model_fields},
}
LOAD_FIELDS = tuple(LOAD_FIELD_BY_NAME)


class DataWarmup(_Strict):
    """A run after the data is loaded (or before a data set's first run), recorded as a warm-up:
    seed 001's oltp_update_index pass. Defaults: the data set's workload and parameters, the
    largest client count of its points."""

    duration: Seconds
    workload: str | None = None
    params: dict[str, ParamValue] | None = None
    clients: int | None = Field(default=None, ge=1, le=MAX_CLIENTS)


class PrepareSettings(_Strict):
    """When data is loaded. `auto`: only when a run finds the tables missing or different;
    `fresh`: once per target and data set before its first run; `never`: you prepared it.
    `reload`: also before each round of repetitions (`round`) or each run (`run`). `check: run`:
    after each run, the workload's consistency conditions (TPC-C's 3.3.2.x, as `dbscale check`),
    kept in the run's record; a failing condition fails the run and stops the study (exit 7)."""

    load: Literal["auto", "fresh", "never"] = "auto"
    reload: Literal["never", "round", "run"] = "never"
    warmup: DataWarmup | None = None
    check: Literal["never", "run"] = "never"


class StatisticsSettings(_Strict):
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    cv_threshold_pct: float = Field(default=5.0, gt=0)
    noise_threshold_pct: float = Field(default=2.0, ge=0)
    include_outages: bool = False  # runs with an outage count in their point's statistics


class LiveSettings(_Strict):
    """Watching the study from outside the terminal (docs/watching.md): `metrics` is where its
    OpenMetrics endpoint listens (HOST:PORT, :PORT or PORT for loopback), `web` where its live
    page does (with /metrics beside it); `linger` how long they stay up after the last run
    (`forever`: until Ctrl-C)."""

    metrics: str | None = None
    web: str | None = None
    linger: SecondsOrZero | Literal["forever"] = 15.0


class StatementSettings(_Strict):
    """The server's statement figures of each run (docs/statements.md): `enabled` reads them
    (pg_stat_statements, performance_schema) around each measured window and times each
    statement on the client; `explain` also keeps the top statements' plans."""

    enabled: bool = True
    explain: bool = False


class PlanSchema(_Strict):
    """A whole plan. Exactly one of `workload` and `workloads`."""

    name: str | None = Field(default=None, pattern=NAME_PATTERN)
    description: str | None = None
    seed_study: str | None = None  # recipes: the study they reproduce
    published: Published | None = None  # recipes: what that study found, to set beside ours
    targets: list[TargetEntry] = Field(default_factory=list)
    workload: WorkloadEntry | None = None
    workloads: list[WorkloadEntry] | None = Field(default=None, min_length=1)
    load: LoadSettings = Field(default_factory=LoadSettings)
    matrix: dict[str, Any] = Field(default_factory=dict)
    repeat: int = Field(default=5, ge=1, le=MAX_REPEAT)
    warmup_runs: int = Field(default=1, ge=0, le=MAX_WARMUP_RUNS)
    warmup_duration: Seconds | None = None
    cooldown: SecondsOrZero = 0.0
    order: Literal["interleaved", "sequential"] = "interleaved"
    # Each point searched for the highest load within latency objectives (docs/capacity.md).
    capacity: CapacityPlan | None = None
    # A failed run is recorded and the study goes on with the other points (exit 6 at the end).
    keep_going: bool = False
    prepare: PrepareSettings = Field(default_factory=PrepareSettings)
    statistics: StatisticsSettings = Field(default_factory=StatisticsSettings)
    micro: MicroSettings | None = None  # micro-benchmarks per target host (docs/micro.md)
    # Fault steps on a local cluster's nodes during measured runs: one scenario (a list) or
    # several by name, which the matrix's `faults` axis picks from (docs/clusters.md).
    faults: list[FaultStep] | dict[str, list[FaultStep]] | None = None
    scale_out: ScaleOut | None = None  # each run's clients over several workers (scaleout.md)
    live: LiveSettings | None = None  # the study watched from Prometheus (docs/watching.md)
    statements: StatementSettings = Field(default_factory=StatementSettings)
    thresholds: ThresholdSettings | None = None  # objectives that fail a build (thresholds.md)
    quick: dict[str, Any] | None = None  # recipes: the overrides of their --quick variant

    @field_validator("workload", mode="before")
    @classmethod
    def _workload_by_name(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @field_validator("workloads", mode="before")
    @classmethod
    def _workloads_by_name(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _one_workload_key(self) -> PlanSchema:
        if (self.workload is None) == (self.workloads is None):
            raise ValueError("give exactly one of `workload` and `workloads`")
        names = [t.name for t in self.targets]
        if len(set(names)) != len(names):
            raise ValueError("target names must be unique")
        if self.micro is not None:
            for target in self.targets:
                _check_micro_reach(target, self.micro)
        return self

    def workload_entries(self) -> list[WorkloadEntry]:
        if self.workloads is not None:
            return list(self.workloads)
        return [self.workload] if self.workload is not None else []

    def targets_or_embedded(self) -> list[TargetEntry]:
        return list(self.targets) or [TargetEntry(name="embedded", url="embedded")]


def _check_micro_reach(target: TargetEntry, micro: MicroSettings) -> None:
    """A remote target's micro-benchmarks run through its `host.command`; fio also needs a
    directory there."""
    if target.is_local:
        return
    if (target.host is None or target.host.command is None) and on_this_machine(target.url):
        return  # measured here, beside its server (micro/on_host.py's loopback_place)
    if target.host is None or target.host.command is None:
        raise ValueError(
            f"target {target.name}: micro-benchmarks run on the target's host; give "
            f"targets.{target.name}.host.command (e.g. 'ssh db1 dbscale'), or leave out `micro`"
        )
    if micro.disk is not None and target.host.disk_dir is None:
        raise ValueError(
            f"target {target.name}: micro.disk needs a directory on its database disk: "
            f"targets.{target.name}.host.disk_dir"
        )


def default_protocol(family: WorkloadFamily) -> QueryProtocol:
    """What the peer tool does by default: sysbench, go-tpc (TPC-C) and YCSB's JDBC binding use
    prepared statements, pgbench the simple protocol. Numbers only compare when dbscale does the
    same."""
    if family in (WorkloadFamily.SYSBENCH, WorkloadFamily.TPCC, WorkloadFamily.CH,
                  WorkloadFamily.YCSB):  # fmt: skip
        return QueryProtocol.PREPARED
    return QueryProtocol.SIMPLE
