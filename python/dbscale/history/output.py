"""History on the console (a table per series for `show`, a table of changes for `detect`) and as
JSON (the same for both: each series with its points and its changes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console

from dbscale.history.detect import A_B, CHANGE_POINTS, Finding, SeriesChanges
from dbscale.history.newest import TESTED
from dbscale.results.text_tables import text_table

METHOD_WORDS = {CHANGE_POINTS: "change point", A_B: "A/B", TESTED: "newest vs runs since change"}


def number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.4g}"


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}%"


def interval(f: Finding) -> str:
    if f.ci_low_pct is None or f.ci_high_pct is None:
        return "-"
    return f"[{f.ci_low_pct:+.1f}%, {f.ci_high_pct:+.1f}%]"


def p_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}"


def marker(f: Finding) -> str:
    return f"{f.direction} {pct(f.change_pct)} {interval(f)} p={p_text(f.p_value)}"


def print_series(results: Sequence[SeriesChanges], console: Console) -> None:
    """`history show`: each series' points in time order, a change marked at its first point;
    series with one point (nothing to compare yet) after the others, and a line when no series
    changed."""
    for result in sorted(results, key=lambda r: len(r.series.points) < 2):
        s = result.series
        at = {f.index: f for f in result.findings}
        table = text_table(["time", "labels", s.metric, "runs", "95% CI", "change"],
                           left={"time", "labels", "change"},
                           title=f"{s.series} @ {s.target}: {s.metric} ({s.unit}) "
                           f"[{s.series_key}]")  # fmt: skip
        for index, p in enumerate(s.points):
            ci = f"{number(p.ci_low)}-{number(p.ci_high)}" if p.ci_low is not None else "-"
            labels = ", ".join(f"{k}={v}" for k, v in p.labels.items())
            change = marker(at[index]) if index in at else ""
            table.add_row(p.time[:19], labels, number(p.value), str(p.n), ci, change)
        console.print(table)
        if result.note:
            console.print(f"  {result.note}")
        if s.excluded_runs:
            console.print(f"  {s.excluded_runs} excluded runs not counted (history exclude)")
    if results and not any(r.findings for r in results):
        console.print(f"no changes found in {len(results)} series", highlight=False)


def print_changes(results: Sequence[SeriesChanges], console: Console) -> None:
    """`history detect`: every change found, then what could not be tested."""
    rows = [(r, f) for r in results for f in r.findings]
    table = text_table(["series", "target", "metric", "near", "before", "after", "change",
                        "95% CI", "p", "kind", "method"],
                       left={"series", "target", "metric", "near", "95% CI", "kind", "method"},
                       title=f"Changes: {len(rows)} in {len(results)} series")  # fmt: skip
    for result, f in rows:
        s = result.series
        near = f.point.label_words() + (" (newest)" if f.in_newest else "")
        table.add_row(s.series, s.target, s.metric, near, number(f.before), number(f.after),
                      pct(f.change_pct), interval(f), p_text(f.p_value), f.direction,
                      METHOD_WORDS.get(f.method, f.method))  # fmt: skip
    if rows:
        console.print(table)
    else:
        console.print(f"no changes found in {len(results)} series", highlight=False)
    for result in results:
        if result.note and not result.findings:
            s = result.series
            console.print(f"{s.series} @ {s.target}, {s.metric}: {result.note}")


def changes_json(results: Sequence[SeriesChanges]) -> list[dict[str, Any]]:
    out = []
    for result in results:
        s = result.series
        out.append({
            "series_key": s.series_key, "series": s.series, "target_key": s.target_key,
            "target": s.target, "metric": s.metric, "unit": s.unit,
            "higher_is_better": s.higher_is_better, "method": result.method, "note": result.note,
            "excluded_runs": s.excluded_runs,
            "points": [{"ingest_id": p.ingest_id, "time": p.time, "labels": p.labels,
                        "value": p.value, "n": p.n, "ci_low": p.ci_low, "ci_high": p.ci_high,
                        "runs": list(p.runs), "run_ids": list(p.run_ids)} for p in s.points],
            "changes": [{"index": f.index, "near": f.point.labels, "time": f.point.time,
                         "before": f.before, "after": f.after, "change_pct": f.change_pct,
                         "ci_low_pct": f.ci_low_pct, "ci_high_pct": f.ci_high_pct,
                         "p_value": f.p_value, "kind": f.direction, "in_newest": f.in_newest,
                         "method": f.method}
                        for f in result.findings],
        })  # fmt: skip
    return out
