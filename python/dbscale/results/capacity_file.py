"""capacity.json: what capacity searches found, beside the runs.jsonl of their levels: one search
for `dbscale capacity`, one per point for a plan with a `capacity:` section. Rewritten after each
level (so an interrupted search shows how far it got) and read by the report; the levels' own
figures stay in their run records.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dbscale.files import read_model_file, write_atomic

CAPACITY_FILE = "capacity.json"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ObjectiveResult(_Model):
    """One objective's capacity: the highest confirmed passing level, and its bracket."""

    objective: str  # p99<=20ms
    percentile: float
    limit_ms: float
    capacity: float | None = None
    highest_pass: float | None = None
    lowest_fail: float | None = None
    at_ceiling: bool = False
    never_passed: bool = False
    confirmations: list[float] = Field(default_factory=list)  # achieved rates at the answer
    short_level: float | None = None  # a level too short to decide ended the search there
    measure_needed_s: float | None = None  # the measure that would decide it
    host_limited: bool = False  # the fail bounding the answer ran while the host was busy
    # The target got slower during the search: drift_high passed, then drift_low failed (well
    # below it, or delivering well less), and drift_high failed when measured again with its
    # throughput down.
    drift_high: float | None = None
    drift_low: float | None = None
    exhausted: bool = False  # the search ran its most levels without a confirmed answer


class LevelResult(_Model):
    """One run of a level: offered and achieved load, latency, and the verdict with its reasons."""

    run_key: str
    level: float
    offered: float | None = None
    achieved: float = 0.0
    measure_s: float = 0.0
    state: str = ""  # pass | fail | marginal | inconclusive | short
    reasons: list[str] = Field(default_factory=list)
    shares_over: list[float] = Field(default_factory=list)  # per objective
    shares_low: list[float | None] = Field(default_factory=list)  # their 95% intervals
    shares_high: list[float | None] = Field(default_factory=list)
    phase: str = ""
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    p999_ms: float | None = None
    tpmc: float | None = None  # TPC-C: New-Orders per minute of the run
    generator_bound: bool = False
    host_busy: str | None = None  # other processes took a material share of the CPU


class CapacityFile(_Model):
    """One search as a whole. `capacity`: the highest level every objective's search confirmed
    (the least of theirs); `geometric_mean`: of the objectives' capacities (critical-jOPS's
    way of folding several objectives into one number)."""

    point: str = ""  # the study's point searched ("" for dbscale capacity's one)
    workload: str
    target: str
    vcpus: int | float | None = None
    knob: str  # rate | clients
    unit: str  # "transactions/s" or "clients"
    objectives: list[ObjectiveResult]
    max_errors: float
    resolution: float
    settle_s: float
    measure_s: tuple[float, float]
    confirm: int
    saturated: float | None = None  # the closed-loop probe's throughput
    capacity: float | None = None
    geometric_mean: float | None = None
    finished: bool = False
    generator_limited: bool = False
    per_vcpu: float | None = None  # capacity per vCPU of the target
    currency: str | None = None
    monthly_cost: float | None = None  # the target's, on demand (730 h)
    cost_per_unit: float | None = None  # monthly cost per unit of capacity
    levels: list[LevelResult] = Field(default_factory=list)


CAPACITY_SCHEMA_VERSION = 1


class CapacityStudy(_Model):
    """capacity.json: every search of the results directory, in the order they ran."""

    schema_version: int = CAPACITY_SCHEMA_VERSION
    searches: list[CapacityFile] = Field(default_factory=list)

    def with_search(self, found: CapacityFile) -> CapacityStudy:
        """This study with `found` in place of the search of its point (or added)."""
        order = [s.point for s in self.searches]
        kept = [s for s in self.searches if s.point != found.point]
        kept.insert(order.index(found.point) if found.point in order else len(kept), found)
        return CapacityStudy(searches=kept)


def number(value: float | None) -> str:
    return "-" if value is None else f"{value:,.4g}"


def answer_lines(found: CapacityFile) -> list[str]:
    """One sentence per objective, then the whole answer (the console's and the report's)."""
    lines = []
    busy_host = (" while other processes took a material share of the host's CPU: the host, "
                 "not the database, may have been the limit")  # fmt: skip
    for o in found.objectives:
        if o.short_level is not None:
            needed = f"about {o.measure_needed_s:g} s" if o.measure_needed_s else "a longer one"
            lines.append(f"{o.objective}: undecided: level {number(o.short_level)} {found.unit} "
                         f"gathered too few transactions to judge in the longest measure "
                         f"({found.measure_s[1]:g} s), with none of them telling of a fail; "
                         f"a measure of {needed} would decide")  # fmt: skip
            continue
        if o.drift_high is not None:
            lines.append(drift_line(o, found))
            continue
        if o.capacity is None and o.exhausted:
            lines.append(f"{o.objective}: undecided: the search ran its most levels without a "
                         f"confirmed answer (bracket [{number(o.highest_pass)}, "
                         f"{number(o.lowest_fail)}] {found.unit}): its verdicts vary more than "
                         f"the resolution")  # fmt: skip
            continue
        if o.capacity is None:
            host = busy_host if o.host_limited else ""
            lines.append(f"{o.objective}: no level passed (lowest tried {number(o.lowest_fail)} "
                         f"{found.unit} failed{host})")  # fmt: skip
            continue
        ceiling = " (at the search's ceiling: it may hold more)" if o.at_ceiling else ""
        achieved = ""
        tpmc = [x.tpmc for x in found.levels if x.level == o.capacity and x.state == "pass"
                and x.tpmc is not None]  # fmt: skip
        if tpmc:
            achieved = f"; tpmC {min(tpmc):,.0f}-{max(tpmc):,.0f}"
        elif o.confirmations:
            achieved = (f"; achieved {min(o.confirmations):,.1f}-{max(o.confirmations):,.1f} "
                        f"over {len(o.confirmations)} passing runs")  # fmt: skip
        bracket = f"[{number(o.highest_pass)}, {number(o.lowest_fail)}]"
        host = f"; the fail above it ran{busy_host}" if o.host_limited else ""
        lines.append(f"{o.objective}: capacity {number(o.capacity)} {found.unit}{ceiling}, "
                     f"bracket {bracket}{achieved}{host}")  # fmt: skip
    if found.capacity is not None:
        several = len(found.objectives) > 1
        mean = f"; geometric mean {number(found.geometric_mean)}" if several else ""
        per = f"; {number(found.per_vcpu)} per vCPU" if found.per_vcpu is not None else ""
        cost = ""
        if found.cost_per_unit is not None:
            cost = (f"; {found.currency} {found.cost_per_unit:.4g} a month per "
                    f"{'transaction/s' if found.knob == 'rate' else 'client'}")  # fmt: skip
        lines.append(f"capacity: {number(found.capacity)} {found.unit} within every "
                     f"objective{mean}{per}{cost}")  # fmt: skip
    if found.generator_limited:
        lines.append("warning: some levels failed because the load generator fell behind: the "
                     "capacity found may be the client's, not the database's (more client "
                     "CPU, or --workers)")  # fmt: skip
    return [f"{found.point}: {line}" for line in lines] if found.point else lines


def drift_line(o: ObjectiveResult, found: CapacityFile) -> str:
    """What the target's drift was: the passed level's runs, first and when measured again."""
    runs = [x for x in found.levels if x.level == o.drift_high]
    first = next((x for x in runs if x.state == "pass"), None)
    again = runs[-1] if runs else None
    seen = ""
    if first is not None and again is not None:
        seen = (f" (achieved {first.achieved:,.1f}/s, p99 {number(first.p99_ms)} ms, then "
                f"{again.achieved:,.1f}/s, p99 {number(again.p99_ms)} ms)")  # fmt: skip
    return (
        f"{o.objective}: no answer: the target got slower during the search: level "
        f"{number(o.drift_high)} {found.unit} passed, then {number(o.drift_low)} failed, "
        f"and {number(o.drift_high)} failed when measured again{seen}; the levels after "
        f"would measure the drift, not a capacity"
    )


def write_capacity(directory: Path, found: CapacityStudy) -> None:
    write_atomic(directory / CAPACITY_FILE, found.model_dump_json(indent=1) + "\n")


def set_aside_capacity(directory: Path) -> Path:
    """Moves a damaged capacity.json aside (never deleted: it may be all someone has)."""
    damaged = directory / f"{CAPACITY_FILE}.damaged"
    (directory / CAPACITY_FILE).replace(damaged)
    return damaged


def read_capacity(directory: Path) -> CapacityStudy | None:
    """The directory's capacity.json, or None when it has none."""
    return read_model_file(
        directory / CAPACITY_FILE,
        CapacityStudy,
        "it is written by dbscale capacity; run the search again with --resume",
    )


CAPACITY_COLUMNS = (
    "point", "workload", "knob", "run_key", "phase", "level", "offered", "achieved", "measure_s",
    "state", "host_busy", "generator_bound", "objective", "share_over", "share_low",
    "share_high", "p99_ms",
)  # fmt: skip


def capacity_rows(directory: Path) -> list[dict[str, str | float | bool | None]]:
    """capacity.json as rows for `load_results`: one per level run and objective."""
    found = read_capacity(directory)
    rows: list[dict[str, str | float | bool | None]] = []
    for search in found.searches if found is not None else []:
        for x in search.levels:
            for i, objective in enumerate(search.objectives):
                rows.append({
                    "point": search.point, "workload": search.workload, "knob": search.knob,
                    "run_key": x.run_key, "phase": x.phase, "level": x.level,
                    "offered": x.offered, "achieved": x.achieved, "measure_s": x.measure_s,
                    "state": x.state, "host_busy": x.host_busy is not None,
                    "generator_bound": x.generator_bound, "objective": objective.objective,
                    "share_over": _nth(x.shares_over, i), "share_low": _nth(x.shares_low, i),
                    "share_high": _nth(x.shares_high, i), "p99_ms": x.p99_ms,
                })  # fmt: skip
    return rows


def _nth(values: list[float] | list[float | None], index: int) -> float | None:
    return values[index] if index < len(values) else None
