"""What a study shows a person: the dry run (expanded points, number of runs, estimated wall
time), the per-point statistics table at the end, and the resolved plan stored as plan.json.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel
from rich.console import Console

from dbscale.plan.load_estimate import describe
from dbscale.plan.micro_steps import MicroStep
from dbscale.plan.schema import LoadSettings, PlanSchema
from dbscale.plan.study import RunStep, Step, Study, data_loads, estimate_s, run_counts
from dbscale.results.text_tables import text_table
from dbscale.values import AxisValue, ParamValue, format_duration, format_eta


class PlannedPoint(BaseModel):
    """A point as plan.json keeps it: its axis values, what runs where, its fingerprint."""

    key: str
    values: dict[str, AxisValue]
    target: str
    workload: str
    params: dict[str, ParamValue]
    load: LoadSettings
    fingerprint: str
    skipped: str | None


class StoredStudy(BaseModel):
    """plan.json: the resolved plan and its points, every URL redacted."""

    source: str
    plan: PlanSchema
    points: list[PlannedPoint]


def study_plan_json(study: Study) -> StoredStudy:
    """The resolved plan as stored in plan.json, with every URL redacted."""
    plan = study.plan.model_copy(update={"targets": [t.redacted() for t in study.plan.targets]})
    return StoredStudy(
        source=study.source,
        plan=plan,
        points=[
            PlannedPoint(
                key=p.key,
                values=p.values,
                target=p.target.name,
                workload=p.workload,
                params=p.params,
                load=p.load,
                fingerprint=p.fingerprint,
                skipped=p.skipped,
            )
            for p in study.points
        ],
    )


def print_dry_run(console: Console, study: Study, pending: Sequence[Step]) -> None:
    plan = study.plan
    title = plan.name or "plan"
    console.print(f"[bold]{title}[/bold] ({study.source})", highlight=False)
    table = text_table(
        ("#", "point", "target", "data set", "clients", "duration", "runs"),
        left={"point", "target", "data set", "duration"},
    )
    runs_per_point: dict[str, int] = {}
    for step in study.steps:
        if isinstance(step, RunStep) and step.kind == "measured":
            runs_per_point[step.point.key] = runs_per_point.get(step.point.key, 0) + 1
    searching = plan.capacity is not None  # a search per point replaces the repetitions
    for i, point in enumerate(study.runnable_points, start=1):
        runs = "a search" if searching else str(runs_per_point.get(point.key, 0))
        duration = "per level" if searching else format_duration(point.load.duration_s)
        table.add_row(str(i), point.key, point.target.name, point.data_label,
                      str(point.load.clients), duration, runs)  # fmt: skip
    console.print(table)
    print_skipped(console, study)
    if searching:
        print_micro_plan(console, list(pending))
        print_capacity_plan(console, study)
        console.print(f"results: {study.out_dir}", highlight=False, soft_wrap=True)
        return
    counts = run_counts(list(pending))
    total = run_counts(study.steps)
    resumed = "" if counts == total else f" still to run (of {total['measured']} measured)"
    console.print(
        f"points: {len(study.runnable_points)}; runs: {counts['measured']} measured + "
        f"{counts['warmup']} warm-up + {counts['data-warmup']} data warm-up{resumed}; "
        f"data loads: {counts['prepare']} (prepare: {plan.prepare.load}, reload: "
        f"{plan.prepare.reload})",
        highlight=False,
    )
    print_micro_plan(console, list(pending))
    console.print(
        f"order: {plan.order}; repeat {plan.repeat}; warm-up runs per point {plan.warmup_runs}; "
        f"cooldown {plan.cooldown:g} s",
        highlight=False,
    )
    eta = eta_text(list(pending), plan.prepare.load, plan.cooldown)
    console.print(f"estimated wall time: {eta}", highlight=False)
    console.print(f"results: {study.out_dir}", highlight=False, soft_wrap=True)


# Levels a capacity search typically runs: a probe, 3 to bracket, 4 to bisect to 2%, and the
# confirmations (measured: 8 to 12 with --confirm 3).
TYPICAL_LEVELS = 8


def print_capacity_plan(console: Console, study: Study) -> None:
    """A capacity study replaces the repetitions by a search per point."""
    capacity = study.plan.capacity
    assert capacity is not None
    settings = capacity.settings()
    objectives = ", ".join(o.text for o in settings.objectives)
    per_level = settings.settle_s + settings.measure_min_s
    levels = TYPICAL_LEVELS + settings.confirm
    each = levels * per_level
    console.print(
        f"capacity: each point searched by {settings.knob.value} for its highest load within "
        f"{objectives}; about {levels} levels of {per_level:g} s or more each (~"
        f"{format_duration(each)} a point, ~{format_duration(each * len(study.runnable_points))} "
        "in all; undecided levels are measured longer)",
        highlight=False, soft_wrap=True,
    )  # fmt: skip


def print_micro_plan(console: Console, steps: list[Step]) -> None:
    """The micro steps still to run, by host: `micro-benchmarks: cpu, disk, net on main; ...`."""
    by_place: dict[str, list[str]] = {}
    for step in steps:
        if isinstance(step, MicroStep) and step.kind not in by_place.get(step.place, []):
            by_place.setdefault(step.place, []).append(step.kind)
    if by_place:
        hosts = "; ".join(f"{', '.join(kinds)} on {place}" for place, kinds in by_place.items())
        count = sum(isinstance(s, MicroStep) for s in steps)
        console.print(f"micro-benchmarks: {count} step(s): {hosts} (micro.jsonl)",
                      highlight=False, soft_wrap=True)  # fmt: skip


def eta_text(steps: list[Step], load: str, cooldown_s: float) -> str:
    """`13h10m of runs + ~2h47m for 4 data loads (4.8 billion rows ...)`."""
    what = "runs and micro-benchmarks" if any(isinstance(s, MicroStep) for s in steps) else "runs"
    runs = f"{format_eta(estimate_s(steps, cooldown_s))} of {what}"
    certain, possible = data_loads(steps, load)
    rates = "at the load rates measured on a 2-core machine, docs/plans.md"
    if certain:
        seconds = sum(e.seconds for e in certain)
        return (f"{runs} + ~{format_eta(seconds)} for {len(certain)} data load(s) "
                f"({describe(certain)} {rates})")  # fmt: skip
    if possible:
        seconds = sum(e.seconds for e in possible)
        return (f"{runs} + up to ~{format_eta(seconds)} if the data must be loaded "
                f"({describe(possible)} {rates}; prepare: auto loads only what is "
                "missing)")  # fmt: skip
    return runs


def print_skipped(console: Console, study: Study) -> None:
    """Points the plan names but cannot run, one line per reason."""
    reasons: dict[str, list[str]] = {}
    for point in study.points:
        if point.skipped:
            reasons.setdefault(point.skipped, []).append(point.key)
    for reason, keys in reasons.items():
        shown = ", ".join(keys[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")
        console.print(f"skipped {len(keys)} point(s): {reason} ({shown})", highlight=False)
