"""A results directory as the report sees it: its runs, its axes, its points (the runs of one
configuration, repetitions included) with their statistics, what the header states, and the
warnings a reader must see. Everything the page and the images draw comes from here.

A point's statistics are `dbscale.results.points.summarize_point`'s, the same figures summary.json
holds, price-performance added once (results/cost.py); the report only decides which runs make a
point: a plan's own point key, or, for runs recorded without one, their swept-axis values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbscale.errors import ResultsError
from dbscale.plan.published import Published
from dbscale.report.axes import Axis, detect_axes, format_value, point_key
from dbscale.report.facts import (
    Value,
    fact_title,
    host_facts,
    run_facts,
    target_label,
    throughput,
    vcpus,
)
from dbscale.results.capacity_file import CapacityStudy, read_capacity
from dbscale.results.cost import add_price_performance
from dbscale.results.directory import (
    RUNS_FILE,
    SUMMARY_CSV_FILE,
    PlanFile,
    read_plan_file,
    read_runs,
)
from dbscale.results.expectations import flag_contradictions
from dbscale.results.micro_records import (
    MicroFigureSummary,
    MicroRecord,
    micro_summary,
    read_micro,
)
from dbscale.results.points import FigureCache, PointSummary, SummarySettings, summarize_point
from dbscale.results.record import RunRecord
from dbscale.targets.facts import TargetRecord, load_target_records
from dbscale.verdicts.thresholds_file import ThresholdsFile, read_thresholds


@dataclass
class RunView:
    """One line of runs.jsonl with what the report derives from it."""

    number: int  # 1-based among the measured runs, as the console counts; warm-ups among theirs
    record: RunRecord
    facts: dict[str, Value]
    label: str
    throughput: float


@dataclass
class PointView:
    """One configuration of the study, its counted runs and their statistics."""

    coords: dict[str, Value]  # every axis (swept or following) -> value
    label: str
    runs: list[RunView]
    summary: PointSummary

    def series(self, axes: Sequence[Axis], x_key: str | None) -> str:
        """The label of the other swept axes: one line per series in a chart against x_key."""
        parts = [
            f"{a.title}={a.format(self.coords.get(a.key))}"
            for a in axes
            if a.swept and a.key != x_key
        ]
        return ", ".join(parts) or "all runs"


@dataclass
class Header:
    """What the page states at its top: what was run, where, with what, when."""

    title: str
    targets: list[dict[str, str]]
    workloads: list[str]
    constants: dict[str, str]  # settings shared by every measured run
    versions: list[str]
    host: dict[str, str]
    started_at: str
    ended_at: str
    counts: dict[str, int]


@dataclass
class ResultsView:
    path: Path
    runs: list[RunView]  # every run, warm-ups and cancelled ones included, in file order
    axes: list[Axis]
    points: list[PointView]
    unit: str  # "TPS" or "tpmC"
    header: Header
    warnings: list[str] = field(default_factory=list)
    summary_csv: str | None = None  # the statistics' own summary.csv, when written
    micro: list[MicroRecord] = field(default_factory=list)  # micro.jsonl
    micro_rows: list[MicroFigureSummary] = field(default_factory=list)  # their statistics, per host
    capacity: CapacityStudy | None = None  # capacity searches (capacity.json)
    published: Published | None = None  # what the study a recipe reproduces published
    thresholds: ThresholdsFile | None = None  # the thresholds' verdicts (thresholds.json)

    @property
    def swept(self) -> list[Axis]:
        return [a for a in self.axes if a.swept]

    @property
    def repeated(self) -> bool:
        return any(p.summary.runs >= 2 for p in self.points)


def load_view(path: Path) -> ResultsView:
    """Reads `path/runs.jsonl` (and summary.csv, plan.json, targets/ if present)."""
    runs_file = path / RUNS_FILE
    if not runs_file.is_file():
        raise ResultsError(
            f"{path} has no {RUNS_FILE}",
            hint="name a directory `dbscale run` wrote (results/<time>-<workload>)",
        )
    try:
        records = read_runs(runs_file)
    except OSError as exc:
        raise ResultsError(
            f"cannot read {runs_file}: {exc}", hint="check its permissions"
        ) from None
    micro = read_micro(path)
    if not records and not micro:
        raise ResultsError(
            f"{runs_file} holds no run (it is empty, or its only line is a torn record)",
            f"nothing finished in that study yet: `dbscale run ... --resume {path}` runs it",
        )
    csv_file = path / SUMMARY_CSV_FILE
    summary_csv = csv_file.read_text(encoding="utf-8") if csv_file.is_file() else None
    plan = read_plan_file(path)
    targets = load_target_records(path)
    unread: str | None = None
    try:
        capacity = read_capacity(path)
    except ResultsError as exc:  # the runs are the study; a damaged summary of them is not
        capacity, unread = None, exc.message
    view = build_view(records, path, summary_csv=summary_csv, plan=plan, targets=targets,
                      capacity=capacity)  # fmt: skip
    if unread is not None:
        view.warnings.append(f"{unread}; the capacity section is left out (a capacity search "
                             "with --resume writes it again from runs.jsonl)")  # fmt: skip
    view.micro = micro
    view.micro_rows = micro_summary(view.micro, summary_settings(plan).confidence)
    try:
        view.thresholds = read_thresholds(path)
    except ResultsError as exc:
        view.warnings.append(f"{exc.message}; the thresholds' verdicts are left out")
    return view


def summary_settings(plan: PlanFile) -> SummarySettings:
    """The plan's statistics settings (plan.json), else the defaults summary.json uses."""
    stats, defaults = plan.plan.statistics, SummarySettings()
    return SummarySettings(
        confidence=stats.confidence if stats.confidence is not None else defaults.confidence,
        cv_threshold_pct=(
            stats.cv_threshold_pct
            if stats.cv_threshold_pct is not None
            else defaults.cv_threshold_pct
        ),
    )


def build_view(
    records: Sequence[RunRecord],
    path: Path,
    *,
    summary_csv: str | None = None,
    plan: PlanFile | None = None,
    targets: Mapping[str, TargetRecord | Mapping[str, Any]] | None = None,
    capacity: CapacityStudy | None = None,
) -> ResultsView:
    """The view of `records`; `plan` is plan.json, `targets` the targets/<name>.json records
    (instance facts and prices, for price-performance), `capacity` a search's capacity.json."""
    plan = plan or PlanFile()
    known = {name: TargetRecord.model_validate(t) for name, t in (targets or {}).items()}
    measured = [r for r in records if not r.warmup]
    unit = "tpmC" if measured and all(r.tpmc is not None for r in measured) else "TPS"
    counts = {True: 0, False: 0}  # warm-ups and measured runs are numbered apart
    runs = []
    for r in records:
        counts[r.warmup] += 1
        runs.append(RunView(counts[r.warmup], r, run_facts(r), "", throughput(r, unit)))
    counted = [run for run in runs if run.record.measured]
    axes = detect_axes([run.facts for run in counted])
    points = _points(counted, axes, summary_settings(plan), known)
    _label_runs(runs, axes)
    header = _header(path, runs, plan.plan.name or "")
    view = ResultsView(path, runs, axes, points, unit, header, summary_csv=summary_csv,
                       capacity=capacity, published=_published(plan))  # fmt: skip
    view.warnings = _warnings(view) + _local_caveats(known)
    return view


def _published(plan: PlanFile) -> Published | None:
    """The plan's `published:` section (recipes), None when it has none or it does not read."""
    raw = (plan.plan.model_extra or {}).get("published")
    try:
        return Published.model_validate(raw) if raw else None
    except ValueError:
        return None


def _local_caveats(targets: Mapping[str, TargetRecord]) -> list[str]:
    """A local server shares its machine with the load generator: its figures are this host's,
    the client's CPU included (one line for all such targets)."""
    local = sorted(name for name, record in targets.items() if record.local is not None)
    if not local:
        return []
    names = ", ".join(local)
    return [f"{names} ran on this machine beside the load generator: the client's CPU use is "
            "the same host's, so the figures show the shape of the scaling here, not another "
            "machine's numbers"]  # fmt: skip


def _group_key(run: RunView, axes: Sequence[Axis]) -> str:
    """A study's own point key when the run has one (plans), else its swept-axis values."""
    return run.record.point_key or "|".join(point_key(run.facts, axes))


def _points(
    counted: Sequence[RunView],
    axes: Sequence[Axis],
    settings: SummarySettings,
    targets: Mapping[str, TargetRecord],
) -> list[PointView]:
    groups: dict[str, list[RunView]] = {}
    for run in counted:
        groups.setdefault(_group_key(run, axes), []).append(run)
    cache = FigureCache()
    summaries = flag_contradictions(
        [
            summarize_point(key, [run.record for run in members], settings, cache)
            for key, members in groups.items()
        ]
    )
    points: list[PointView] = []
    for members, summary in zip(
        groups.values(), add_price_performance(summaries, targets), strict=True
    ):
        first = members[0].facts
        coords = {a.key: first.get(a.key) for a in axes}
        label = ", ".join(f"{a.title}={a.format(coords[a.key])}" for a in axes if a.swept)
        points.append(PointView(coords, label or "all runs", members, summary))
    order = {a.key: {repr(v): i for i, v in enumerate(a.values)} for a in axes if a.swept}
    points.sort(key=lambda p: [order[k].get(repr(p.coords[k]), 0) for k in order])
    return points


def _label_runs(runs: Sequence[RunView], axes: Sequence[Axis]) -> None:
    """`#3 clients=4` style labels, unique per run; warm-ups say so."""
    for run in runs:
        parts = [f"{a.title}={a.format(run.facts.get(a.key))}" for a in axes if a.swept]
        what = "warm-up" if run.record.warmup else (", ".join(parts) or "run")
        run.label = f"#w{run.number} {what}" if run.record.warmup else f"#{run.number} {what}"


def _header(path: Path, runs: Sequence[RunView], name: str) -> Header:
    measured = [r for r in runs if not r.record.warmup] or list(runs)
    targets: dict[str, dict[str, str]] = {}
    for run in runs:
        label = target_label(run.record)  # the fact itself is the plan's when it is swept
        entry = targets.setdefault(label, {"target": label})
        if run.record.server_version:
            entry["server"] = run.record.server_version
        if (count := vcpus(run.record)) is not None:
            entry["vCPUs"] = str(count)
    constants: dict[str, str] = {}
    keys = [k for k in (measured[0].facts if measured else {}) if k not in ("target", "workload")]
    for key in keys:
        values = {repr(r.facts.get(key)) for r in measured}
        value = measured[0].facts.get(key)
        if len(values) == 1 and value is not None:
            constants[fact_title(key)] = format_value(value, key)
    started = sorted(r.record.started_at for r in runs if r.record.started_at)
    ended = sorted(r.record.ended_at for r in runs if r.record.ended_at)
    host = next((h for r in runs if (h := host_facts(r.record))), {})
    return Header(
        title=f"{name} ({path.name})" if name else path.name,
        targets=list(targets.values()),
        workloads=sorted(
            {
                r.record.workload or (r.record.config.workload.name if r.record.config else "")
                for r in measured
            }
        ),
        constants=constants,
        versions=sorted({r.record.dbscale_version for r in runs} - {""}),
        host=host,
        started_at=started[0] if started else "",
        ended_at=ended[-1] if ended else "",
        counts={
            "runs": len(runs),
            "measured": sum(1 for r in runs if not r.record.warmup),
            "warm-up": sum(1 for r in runs if r.record.warmup),
            "cancelled": sum(1 for r in runs if r.record.cancelled),
            "failed": sum(1 for r in runs if r.record.status == "failed"),
        },
    )


def _warnings(study: ResultsView) -> list[str]:
    """The page's warnings, each kind once: repeated ones name their runs' count and range."""
    warnings: list[str] = []
    if not study.points:
        warnings.append("no finished measured run: nothing to summarize")
    grouped: dict[str, list[RunView]] = {}
    for run in study.runs:
        if run.record.cancelled:
            grouped.setdefault("was cancelled (Ctrl-C): shown, not counted", []).append(run)
        elif run.record.status == "failed":
            message = run.record.verdict.message
            grouped.setdefault(f"failed: {message}".rstrip(": "), []).append(run)
        elif run.record.status == "errors" and not run.record.warmup:
            planned = " (during its planned faults)" if run.record.faults else ""
            classes = ", ".join(k for k, v in run.record.errors.by_class.items() if v)
            grouped.setdefault(f"had errors{planned}" + (f": {classes}" if classes else ""),
                               []).append(run)  # fmt: skip
    for what, runs in grouped.items():
        if len(runs) == 1:
            detail = f" ({_errors(runs[0].record)})" if what.startswith("had errors") else ""
            warnings.append(f"run {runs[0].label} {what}{detail}")
        else:
            warnings.append(f"{_runs_text(runs)} {what}")
    observed_warnings = (
        ("client_bound", "the load generator itself was the bottleneck (these runs measure "
                         "dbscale, not the database)"),
        ("host_warning", "other processes took a material share of the host's CPU (the runs "
                         "shared their machine; figures may be low and noisy)"),
    )  # fmt: skip
    for field_name, text in observed_warnings:
        flagged_runs = [
            run
            for run in study.runs
            if run.record.measured
            and run.record.limited_by is not None
            and getattr(run.record.limited_by, field_name)
        ]
        if flagged_runs:
            warnings.append(f"{text}: {_runs_text(flagged_runs)}")
    busy: dict[str, list[RunView]] = {}
    for run in study.runs:
        for worker in run.record.workers:
            if worker.saturated:
                busy.setdefault(worker.name, []).append(run)
    for name, runs in busy.items():
        warnings.append(f"{_runs_text(runs)}: {name} ran on a busy host: that load generator "
                        "may have limited the run")  # fmt: skip
    # The statistics' flags, each once with the points it concerns (a capacity search's levels
    # are judged by the search, not compared as points).
    flagged: dict[str, list[str]] = {}
    for point in study.points if study.capacity is None else ():
        for flag in point.summary.flags:
            flagged.setdefault(flag, []).append(point.label)
    for flag, labels in flagged.items():
        where = "every point" if len(labels) == len(study.points) > 1 else "; ".join(labels)
        warnings.append(f"{flag} ({where})")
    return warnings


def _runs_text(runs: Sequence[RunView]) -> str:
    """`run #3 clients=8`, or for several `4 runs (#2 to #9)`: a count and a range, not every
    run's full label."""
    if len(runs) == 1:
        return f"run {runs[0].label}"
    tag = [label.split(" ", 1)[0] for label in (r.label for r in runs)]
    return f"{len(runs)} runs ({tag[0]} to {tag[-1]})"


def _errors(record: RunRecord) -> str:
    errors = record.errors
    detail = ", ".join(f"{k} {v}" for k, v in errors.by_class.items() if v)
    return f"{errors.total} ({detail})" if detail else str(errors.total)
