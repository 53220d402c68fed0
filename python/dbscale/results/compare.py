"""`dbscale compare`: two results directories point by point (`DIR_A DIR_B`), or two sets of
points of one study (`DIR --a tls=disable --b tls=require`), paired by their other axis values.
For each pair: TPS, p95 and p99 (per-run values), their relative change with a confidence
interval, a Mann-Whitney p-value Holm-corrected across pairs, and a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from rich.console import Console

from dbscale.errors import ConfigError, ResultsError
from dbscale.results.cost_tables import (
    compare_price_performance,
    print_price_performance_comparison,
    print_target_differences,
)
from dbscale.results.directory import RUNS_FILE, read_plan_file, read_runs
from dbscale.results.record import RunRecord
from dbscale.results.statement_compare import (
    PointStatements,
    compare_statements,
    print_statement_changes,
)
from dbscale.results.text_tables import text_table
from dbscale.stats.comparison import (
    ALPHA,
    DEFAULT_NOISE_PCT,
    ESTIMATE,
    POWER,
    Change,
    adjust_and_decide,
    compare_samples,
    verdict_words,
)
from dbscale.targets.facts import TargetDifference, diff_target_records
from dbscale.values import format_value

Record = RunRecord
METRICS = (("tps", True), ("p95_ms", False), ("p99_ms", False))


class PointComparison(BaseModel):
    """One point on both sides: each metric's change (`stats.comparison.Change`)."""

    model_config = ConfigDict(frozen=True)

    point: str
    tps: Change
    p95_ms: Change
    p99_ms: Change

    def metric(self, name: str) -> Change:
        change: Change = getattr(self, name)
        return change


class Comparison(BaseModel):
    """A comparison as `compare_dirs` returns it and `compare --json` prints it, read back typed
    by the console table and the HTML page."""

    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    noise_threshold_pct: float
    alpha: float
    confidence: float
    estimate: str = ESTIMATE
    power: float = POWER
    detect_pct: float | None = None
    points: list[PointComparison]
    unmatched: list[str] = Field(default_factory=list)
    price_performance: list[dict[str, JsonValue]] = Field(default_factory=list)
    target_differences: list[TargetDifference] = Field(default_factory=list)
    statements: list[PointStatements] = Field(default_factory=list)  # --statements


@dataclass(frozen=True)
class ComparisonOptions:
    select_a: str | None = None
    select_b: str | None = None
    noise_pct: float | None = None  # default: the plan's statistics.noise_threshold_pct, or 2
    confidence: float = 0.95
    alpha: float = ALPHA
    detect_pct: float | None = None  # --detect: the runs per side this change needs
    statements: bool = False  # --statements: which statement made the difference


def _records(directory: Path) -> list[Record]:
    path = directory / RUNS_FILE
    if not path.is_file():
        raise ResultsError(
            f"{directory} holds no {RUNS_FILE}", "name a results directory of `dbscale run`"
        )
    return [r for r in read_runs(path) if r.measured]


def _noise_from_plan(directory: Path) -> float | None:
    return read_plan_file(directory).plan.statistics.noise_threshold_pct


def _values(records: Sequence[Record], metric: str) -> list[float]:
    if metric == "tps":
        return [r.tps for r in records]
    name = metric.removesuffix("_ms")
    values = [r.latency_ms.percentile(name) if r.latency_ms else None for r in records]
    return [v for v in values if v is not None]


def parse_change_pct(text: str) -> float:
    """`5%`, `5` or `-3.5%` as a percentage; 0 and non-numbers are refused."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = 0.0
    if value == 0.0 or not math.isfinite(value) or value <= -100.0:
        raise ConfigError(
            f"--detect {text!r} is not a change to detect",
            "give a percentage other than 0, e.g. --detect 5%",
        )
    return value


def parse_selector(text: str, option: str) -> dict[str, str]:
    selector: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"{option} {text!r} is not axis=value[,axis=value]",
                "e.g. --a tls=disable --b tls=require",
            )
        selector[key.strip().removeprefix("params.")] = value.strip()
    return selector


def _point_values(record: Record) -> dict[str, str]:
    return {k: format_value(v, k) for k, v in record.point.items()}


def _group(records: Sequence[Record]) -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(record.group_key, []).append(record)
    return groups


def _pairs_across(
    a: Path, b: Path
) -> tuple[list[tuple[str, list[Record], list[Record]]], list[str]]:
    ga, gb = _group(_records(a)), _group(_records(b))
    pairs = [(key, ga[key], gb[key]) for key in ga if key in gb]
    unmatched = [k for k in ga if k not in gb] + [k for k in gb if k not in ga]
    return pairs, unmatched


def _pairs_within(
    directory: Path, select_a: dict[str, str], select_b: dict[str, str]
) -> tuple[list[tuple[str, list[Record], list[Record]]], list[str]]:
    if set(select_a) != set(select_b):
        raise ConfigError(
            "--a and --b must name the same axes", "e.g. --a tls=disable --b tls=require"
        )
    side_a: dict[str, list[Record]] = {}
    side_b: dict[str, list[Record]] = {}
    axes_seen: set[str] = set()
    for record in _records(directory):
        values = _point_values(record)
        axes_seen.update(values)
        rest = ",".join(f"{k}={v}" for k, v in values.items() if k not in select_a) or "all"
        if all(values.get(k) == v for k, v in select_a.items()):
            side_a.setdefault(rest, []).append(record)
        elif all(values.get(k) == v for k, v in select_b.items()):
            side_b.setdefault(rest, []).append(record)
    unknown = sorted(set(select_a) - axes_seen)
    if unknown:
        raise ConfigError(
            f"{directory} has no axis {', '.join(unknown)}",
            f"its axes: {', '.join(sorted(axes_seen)) or 'none (a single point)'}",
        )
    pairs = [(key, side_a[key], side_b[key]) for key in side_a if key in side_b]
    unmatched = [k for k in side_a if k not in side_b] + [k for k in side_b if k not in side_a]
    return pairs, unmatched


def compare_dirs(a: Path, b: Path | None, options: ComparisonOptions) -> Comparison:
    """The comparison (what `--json` prints)."""
    if b is not None and (options.select_a is not None or options.select_b is not None):
        raise ConfigError(
            "--a/--b select points within one results directory, but two were given",
            f"compare the two directories point by point (dbscale compare {a} {b}), or one "
            f"directory's points: dbscale compare {a} --a AXIS=V1 --b AXIS=V2",
        )
    if b is None:
        if options.select_a is None or options.select_b is None:
            raise ConfigError(
                "compare needs two results directories, or one with --a and --b",
                "e.g. dbscale compare DIR --a tls=disable --b tls=require",
            )
        sel_a = parse_selector(options.select_a, "--a")
        sel_b = parse_selector(options.select_b, "--b")
        pairs, unmatched = _pairs_within(a, sel_a, sel_b)
        label_a, label_b = f"{a} [{options.select_a}]", f"{a} [{options.select_b}]"
    else:
        pairs, unmatched = _pairs_across(a, b)
        label_a, label_b = str(a), str(b)
    if not pairs:
        raise ConfigError(
            "no point appears on both sides", "compare results of the same plan or matrix axes"
        )
    noise = options.noise_pct
    if noise is None:
        noise = _noise_from_plan(a) if b is None else _noise_from_plan(b) or _noise_from_plan(a)
    noise = DEFAULT_NOISE_PCT if noise is None else noise
    per_metric: dict[str, list[Change]] = {}
    for metric, higher_is_better in METRICS:
        changes = [
            compare_samples(
                metric,
                _values(ra, metric),
                _values(rb, metric),
                higher_is_better=higher_is_better,
                confidence=options.confidence,
                detect_pct=options.detect_pct,
                alpha=options.alpha,
            )
            for _, ra, rb in pairs
        ]
        per_metric[metric] = adjust_and_decide(changes, noise, options.alpha)
    return Comparison(
        a=label_a,
        b=label_b,
        noise_threshold_pct=noise,
        alpha=options.alpha,
        confidence=options.confidence,
        estimate=ESTIMATE,
        power=POWER,
        detect_pct=options.detect_pct,
        points=[
            PointComparison(
                point=key,
                tps=per_metric["tps"][i],
                p95_ms=per_metric["p95_ms"][i],
                p99_ms=per_metric["p99_ms"][i],
            )
            for i, (key, _, _) in enumerate(pairs)
        ],
        unmatched=unmatched,
        # issue 6: TPM per vCPU and $/TPM of both sides; settings that differ between targets
        price_performance=compare_price_performance(pairs, a, b),
        target_differences=diff_target_records(a, b) if b is not None else [],
        statements=(
            [compare_statements(key, ra, rb) for key, ra, rb in pairs] if options.statements else []
        ),
    )


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{float(value):.{digits}f}"


def _print_power(console: Console, comparison: Comparison) -> None:
    """Per point, what the TPS runs could detect, and what a given change (--detect) needs."""
    detect = comparison.detect_pct
    columns = ["point", "runs A/B", f"smallest change detected ({comparison.power:.0%} power)"]
    if detect:
        columns.append(f"runs per side for ±{detect:g}%")
    table = text_table(columns, left={"point"}, title="power (TPS)")
    for row in comparison.points:
        c = row.tps
        detectable = c.detectable_pct
        table.add_row(
            row.point,
            f"{c.n_a}/{c.n_b}",
            f"±{detectable:.1f}%" if detectable is not None else "- (fewer than 4 runs a side)",
            *([str(c.runs_to_detect or "-")] if detect else []),
        )
    console.print(table)


def print_comparison(console: Console, comparison: Comparison) -> None:
    console.print(
        f"A: {comparison.a}\nB: {comparison.b}", highlight=False, soft_wrap=True, markup=False
    )
    table = text_table(
        ("point", "metric", "n", "A median", "B median", "change %", "95% CI %", "p (Holm)",
         "verdict"),
        left={"point", "metric", "verdict"},
    )  # fmt: skip
    for row in comparison.points:
        for metric, _ in METRICS:
            c = row.metric(metric)
            ci = (
                f"[{_num(c.ci_low_pct)}, {_num(c.ci_high_pct)}]"
                if c.ci_low_pct is not None
                else "-"
            )
            table.add_row(
                row.point if metric == "tps" else "",
                metric,
                f"{c.n_a}/{c.n_b}",
                _num(c.median_a, 2),
                _num(c.median_b, 2),
                _num(c.change_pct),
                ci,
                _num(c.p_adjusted, 4),
                verdict_words(c),
            )
    console.print(table)
    console.print(f"change: {comparison.estimate} (B's median / A's median - 1)", highlight=False)
    console.print("p95_ms, p99_ms: the median of each run's own percentile (runs are the "
                  "samples compared); the summary's p99 is of all runs' transactions merged, so "
                  "the two can differ", highlight=False, soft_wrap=True)  # fmt: skip
    _print_power(console, comparison)
    console.print(
        f"verdict: Mann-Whitney U, Holm-corrected across points, alpha {comparison.alpha}, "
        f"and the {comparison.confidence:.0%} CI of the change beyond "
        f"±{comparison.noise_threshold_pct:g}% (latency: lower is better)",
        highlight=False,
    )
    if comparison.unmatched:
        console.print(f"only on one side: {', '.join(comparison.unmatched)}", highlight=False)
    print_price_performance_comparison(console, comparison.price_performance)
    print_target_differences(console, comparison.target_differences)
    if comparison.statements:
        print_statement_changes(console, comparison.statements)
