"""The run configuration: pydantic models that mirror `crates/dbscale-core/src/config.rs` field for
field. They are the single source of truth; `RunConfig.to_core_json()` is the one JSON the native
core receives, and Rust validates it again (`deny_unknown_fields`), so both sides must agree.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
)
from pydantic_core import ErrorDetails

from dbscale.errors import ConfigError
from dbscale.modes import ConnectMode, QueryProtocol, Routing, TlsMode
from dbscale.redaction import redact_url
from dbscale.values import duration_seconds, zero_or_duration_seconds

MAX_SEED = 2**64 - 1

ParamValue = int | float | bool | str

# Bounds at the edge, the same numbers as the core's `bounds.rs` (the contract test compares
# them): every value the engine gets is one it can honour, and a typo is an error, not a week of
# waiting or a panic.
MIN_DURATION_S = 0.1  # below the shortest interval anything is measured over
MAX_DURATION_S = 7 * 24 * 3600.0  # a week: longer is a typo; a soak is several runs
MAX_CLIENTS = 100_000
MAX_THREADS = 4_096
MAX_RATE_TPS = 1e8
MIN_RATE_TPS = 1e-3  # one transaction in about 17 minutes: below it, a typo (1e-300)
MAX_TRIES = 1_000_000
MIN_INTERVAL_S = 0.05
MIN_TRANSACTION_TIMEOUT_S = 0.01
MAX_U32 = 2**32 - 1

# A time in seconds, also written `30s`, `2m` or `500ms` (the bounds first, so the schema shows
# them).
Seconds = Annotated[
    float,
    Field(ge=MIN_DURATION_S, le=MAX_DURATION_S, allow_inf_nan=False),
    BeforeValidator(duration_seconds),
]
TransactionTimeout = Annotated[
    float,
    Field(ge=MIN_TRANSACTION_TIMEOUT_S, le=MAX_DURATION_S, allow_inf_nan=False),
    BeforeValidator(duration_seconds),
]
SecondsOrZero = Annotated[
    float,
    Field(ge=0, le=MAX_DURATION_S, allow_inf_nan=False),
    BeforeValidator(zero_or_duration_seconds),
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False, defer_build=True)


class TargetConfig(_Model):
    """Where to connect: a `postgresql://` URL or a libpq `key=value` string (never `embedded`:
    the embedded server is started first and its URL put here)."""

    url: str = Field(min_length=1)
    # Further nodes of the same database (a cluster): `routing` says how clients use them.
    more_urls: list[str] = Field(default=[])
    tls: TlsMode | None = None
    # How clients use the nodes (None: round-robin over several URLs, libpq's order over one
    # URL's host list).
    routing: Routing | None = None


class ScriptSource(_Model):
    """One script of the `script` workload's mix: a file's text under its name, or a built-in
    (no text). The text is read once, when the plan is built, and recorded with the run."""

    name: str = Field(min_length=1)
    text: str | None = None
    weight: int = Field(default=1, ge=0, le=MAX_U32)


class WorkloadConfig(_Model):
    """A workload by its catalog name, with `--set` parameters (the core refuses unknown keys);
    the `script` workload also carries its scripts and `--define` variables."""

    name: str = Field(min_length=1)
    params: dict[str, ParamValue] = Field(default={})
    scripts: list[ScriptSource] = Field(default=[])
    defines: dict[str, str] = Field(default={})


class WorkerShare(_Model):
    """A worker's part of a scaled-out run (dbscale/scaleout): its clients are `first_client`
    onwards of the run's `total_clients`; it waits after connecting until told to start."""

    first_client: int = Field(ge=0, le=MAX_U32)
    total_clients: int = Field(ge=1, le=MAX_CLIENTS)


class TransactionLogConfig(_Model):
    """pgbench `-l`: where a run writes its per-transaction log (thread N adds `.N`), and the
    share of transactions logged (`--sampling-rate`)."""

    path: str = Field(min_length=1)
    sampling_rate: float = Field(default=1.0, gt=0, le=1, allow_inf_nan=False)


class LoadPart(_Model):
    """`prepare` only: one phase of a load split over workers (`schema` on one, `rows` on
    every worker, each its `part` of `parts`, `finish` on one)."""

    phase: Literal["schema", "rows", "finish"]
    part: int = Field(default=0, ge=0, le=MAX_U32)
    parts: int = Field(default=1, ge=1, le=MAX_U32)


def _plan_name(core_name: str, plan_name: str) -> dict[str, Any]:
    """A setting's names: the core's, then the one plan files, matrix axes and `--set` use (a
    plan's load settings are written under it too)."""
    return {
        "validation_alias": AliasChoices(core_name, plan_name),
        "serialization_alias": plan_name,
    }


class RunSettings(_Model):
    """How a run loads its target, each setting declared once: by the core's name (config.rs),
    with its bounds and default. Plan files, matrix axes and `--set` name a setting by the alias
    after it (`duration` for `duration_s`); the command line's flag is that alias with dashes
    (`--max-tries`). A plan's load settings are these and a few of the plan's own."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    protocol: QueryProtocol = QueryProtocol.SIMPLE
    connect: ConnectMode = ConnectMode.PERSISTENT
    clients: int = Field(default=1, ge=1, le=MAX_CLIENTS)
    threads: int | None = Field(default=None, ge=1, le=MAX_THREADS)
    duration_s: Seconds = Field(default=30.0, **_plan_name("duration_s", "duration"))
    ramp_s: SecondsOrZero = Field(default=0.0, **_plan_name("ramp_s", "ramp"))
    rate_tps: float | None = Field(
        default=None,
        ge=MIN_RATE_TPS,
        le=MAX_RATE_TPS,
        allow_inf_nan=False,
        **_plan_name("rate_tps", "rate"),
    )
    max_tries: int = Field(default=1, ge=1, le=MAX_TRIES)
    transactions: int | None = Field(default=None, ge=1, le=2**63 - 1)
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    interval_s: Annotated[
        float,
        Field(ge=MIN_INTERVAL_S, le=MAX_DURATION_S, allow_inf_nan=False),
        BeforeValidator(duration_seconds),
    ] = Field(default=1.0, **_plan_name("interval_s", "interval"))
    # pgbench -L, in milliseconds: slower transactions are counted as over it; under a rate,
    # arrivals already later than it are skipped.
    latency_limit_ms: float | None = Field(
        default=None,
        gt=0,
        le=MAX_DURATION_S * 1000,
        allow_inf_nan=False,
        **_plan_name("latency_limit_ms", "latency_limit"),
    )
    # The client's own deadline per transaction: past it the statement is cancelled and the
    # session dropped (a synchronous-replication wait ignores statement_timeout).
    transaction_timeout_s: TransactionTimeout | None = Field(
        default=None, **_plan_name("transaction_timeout_s", "transaction_timeout")
    )

    @classmethod
    def plan_names(cls) -> dict[str, str]:
        """Each setting's plan name (the alias) by its core name."""
        names: dict[str, str] = {}
        for name, info in RunSettings.model_fields.items():
            names[name] = info.serialization_alias or name
        return names

    def settings(self) -> dict[str, Any]:
        """The run settings alone, by their core names (a plan's own load settings left out)."""
        return {name: getattr(self, name) for name in RunSettings.model_fields}


class RunConfig(RunSettings):
    """Everything one run, prepare or cleanup needs. Defaults match config.rs (the contract
    test compares them)."""

    target: TargetConfig
    workload: WorkloadConfig
    share: WorkerShare | None = None  # set on a scaled-out run's workers only
    load_part: LoadPart | None = None  # set on a split load's parts only
    transaction_log: TransactionLogConfig | None = None  # set when the plan logs (pgbench -l)
    interval_histograms: bool = False  # each interval's histogram kept (capacity levels)
    track_availability: bool = False  # stretches without a success kept (clusters, faults)
    wait_for_go: bool = False  # connected, the run waits for `Run.go` (statement snapshots)
    statement_timing: bool = False  # built-ins: each statement timed on the client

    def to_core_json(self) -> str:
        """The JSON text `_core.start_run`/`prepare`/`cleanup`/`probe` accept."""
        return json.dumps(self._dump(), separators=(",", ":"))

    def _dump(self) -> dict[str, Any]:
        unset: dict[str, Any] = {
            name: True
            for name in (
                "share",
                "load_part",
                "transactions",
                "latency_limit_ms",
                "transaction_log",
            )
            if getattr(self, name) is None
        }
        flags = ("interval_histograms", "track_availability", "wait_for_go", "statement_timing")
        for flag in flags:
            if not getattr(self, flag):  # records from before the field stay as they were
                unset[flag] = True
        if self.transaction_timeout_s is None:
            unset["transaction_timeout_s"] = True
        if self.target.routing is None:
            unset["target"] = {"routing"}
        # Only the script workload has scripts and defines; others' records stay as they were.
        empty = {name for name in ("scripts", "defines") if not getattr(self.workload, name)}
        if empty:
            unset["workload"] = empty
        return self.model_dump(mode="json", exclude=unset)

    def redacted(self) -> dict[str, Any]:
        """The configuration as stored in results: the target URL without its password."""
        data = self._dump()
        data["target"]["url"] = redact_url(self.target.url)
        data["target"]["more_urls"] = [redact_url(url) for url in self.target.more_urls]
        return data


def option_name(plan_name: str) -> str:
    """The `dbscale run` flag of a setting named `plan_name`: `max_tries` is `--max-tries`."""
    return "--" + plan_name.replace("_", "-")


# What a refusal names each field by: a run setting by its flag, the rest as the command line
# says them.
OPTION_NAMES = {
    **{name: option_name(plan) for name, plan in RunSettings.plan_names().items()},
    "url": "--target",
    "tls": "--tls",
    "name": "workload",
}


def make_run_config(**fields: Any) -> RunConfig:
    """Builds a `RunConfig`, turning pydantic's report into one `ConfigError` line that names
    the option: `--clients: must be at least 1, got 0`."""
    try:
        return RunConfig(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(part) for part in first["loc"]]
        name = OPTION_NAMES.get(loc[-1] if loc else "", ".".join(loc) or "configuration")
        more = len(exc.errors()) - 1
        extra = f"; and {more} more problem{'s' if more > 1 else ''}" if more else ""
        raise ConfigError(f"{name}: {plain_message(first)}{extra}") from None


_PLAIN = {
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be greater than {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be less than {lt}",
    "finite_number": "must be a finite number",
}


def plain_message(error: ErrorDetails) -> str:
    """One validation error in words, with the value given: `must be at least 1, got 0`."""
    template = _PLAIN.get(error["type"])
    message = template.format(**(error.get("ctx") or {})) if template else error["msg"]
    message = message.removeprefix("Value error, ")
    given = error.get("input")
    if (
        error["type"] != "missing"
        and not isinstance(given, dict | list)
        and repr(given) not in message
    ):
        message += f", got {given!r}"
    return message
