"""The page of `dbscale history show|detect --html`: one chart per series and metric, its points
in time order with their 95% interval band and the runs behind each, the mean of each stretch
between changes, and each change drawn where it happened (red: a regression, green: an
improvement), then the table of changes."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbscale import __version__
from dbscale.history.detect import REGRESSION, SeriesChanges
from dbscale.history.output import interval, p_text, pct
from dbscale.history.series import SeriesPoint
from dbscale.report import bundle
from dbscale.report.chart import Chart
from dbscale.report.markup import Markup, element, join
from dbscale.report.page import chart_figures, facts_list, html_document, warnings_box
from dbscale.report.rows import r4
from dbscale.report.specs import CONFIG
from dbscale.report.tables import Cell, html_table

MAX_CHARTS = 60
TICK_WIDTH = 18  # characters of a point's tick label
KIND_COLORS = {"regression": "#cf222e", "improvement": "#2da44e"}


def _segments(result: SeriesChanges) -> list[dict[str, Any]]:
    """The mean of each stretch between changes, as a level from its first to its last point."""
    points = result.series.points
    bounds = [0, *sorted(f.index for f in result.findings), len(points)]
    out = []
    for start, end in itertools.pairwise(bounds):
        if end > start:
            mean = sum(p.value for p in points[start:end]) / (end - start)
            out.append({"from": start + 1, "to": end, "mean": r4(mean)})
    return out


def series_chart(result: SeriesChanges) -> Chart:
    s = result.series
    points = [{"point": i + 1, "value": r4(p.value), "lo": r4(p.ci_low), "hi": r4(p.ci_high),
               "labels": p.label_words(), "time": p.time[:19], "n": p.n}
              for i, p in enumerate(s.points)]  # fmt: skip
    runs = [{"point": i + 1, "run": r4(v)} for i, p in enumerate(s.points) for v in p.runs]
    changes = [{"point": f.index + 0.5, "kind": f.direction,
                "text": f"{pct(f.change_pct)} near {f.point.label_words()}"}
               for f in result.findings]  # fmt: skip
    domain = {"domain": [0.5, len(points) + 0.5], "nice": False}
    # A tick per point (never 0.5, 1.0, 1.5), labelled with the point's own labels.
    names = json.dumps(["", *_tick_labels(s.points)])
    axis = {"values": list(range(1, len(points) + 1)), "labelExpr": f"{names}[datum.value]",
            "labelAngle": -30 if len(points) > 6 else 0, "labelOverlap": True}  # fmt: skip
    x = {"field": "point", "type": "quantitative", "title": "point (in time order)",
         "axis": axis, "scale": domain}  # fmt: skip
    y_title = f"{s.metric} ({s.unit})"
    y = {"field": "value", "type": "quantitative", "title": y_title, "scale": {"zero": False}}
    scale = {"domain": list(KIND_COLORS), "range": list(KIND_COLORS.values())}
    color = {"field": "kind", "type": "nominal", "title": "change", "scale": scale}
    layers: list[dict[str, Any]] = [
        {"data": {"values": [p for p in points if p["lo"] is not None]},
         "mark": {"type": "area", "opacity": 0.18, "color": "#0969da"},
         "encoding": {"x": x, "y": {"field": "lo", "type": "quantitative", "title": y_title},
                      "y2": {"field": "hi"}}},
        {"data": {"values": runs}, "mark": {"type": "point", "size": 14, "color": "#8c959f"},
         "encoding": {"x": x, "y": {"field": "run", "type": "quantitative"}}},
        {"data": {"values": _segments(result)},
         "mark": {"type": "rule", "strokeDash": [5, 3], "color": "#59636e"},
         "encoding": {"x": {"field": "from", "type": "quantitative"}, "x2": {"field": "to"},
                      "y": {"field": "mean", "type": "quantitative"}}},
        {"data": {"values": points}, "mark": {"type": "line", "point": True, "color": "#0969da"},
         "encoding": {"x": x, "y": y,
                      "tooltip": [{"field": "point"}, {"field": "time"}, {"field": "labels"},
                                  {"field": "value"}, {"field": "n", "title": "runs"},
                                  {"field": "lo", "title": "95% CI low"},
                                  {"field": "hi", "title": "95% CI high"}]}},
    ]  # fmt: skip
    if changes:
        layers.append({"data": {"values": changes}, "mark": {"type": "rule", "strokeWidth": 2},
                       "encoding": {"x": {"field": "point", "type": "quantitative"},
                                    "color": color, "tooltip": [{"field": "text"}]}})  # fmt: skip
    spec = {"title": {"text": f"{s.metric}: {s.series}", "subtitle": s.target}, "config": CONFIG,
            "width": 560, "height": 180, "layer": layers}  # fmt: skip
    digest = hashlib.sha256(f"{s.series_key}/{s.metric}".encode()).hexdigest()[:10]
    excluded = f" {s.excluded_runs} excluded runs left out." if s.excluded_runs else ""
    caption = (f"{len(s.points)} points, each the median of its ingest's runs (grey) with its "
               f"95% interval (band); dashed: the mean between changes. Found by {result.method}"
               + (f": {result.note}" if result.note else ".") + excluded)  # fmt: skip
    return Chart(f"history-{digest}", "history", f"{s.metric}: {s.series}", caption, spec)


def _tick_labels(points: Sequence[SeriesPoint]) -> list[str]:
    """Each point's tick: the labels that tell it from the others (`version=2.0`), its date
    when none do."""
    keys = sorted({k for p in points for k in p.labels})
    varying = [k for k in keys if len({p.labels.get(k) for p in points}) > 1]
    out = []
    for p in points:
        values = [(k, p.labels.get(k, "-")) for k in varying]
        text = (f"{values[0][0]}={values[0][1]}" if len(values) == 1
                else " / ".join(v for _, v in values) or p.time[:10])  # fmt: skip
        out.append(text if len(text) <= TICK_WIDTH else text[: TICK_WIDTH - 1] + "…")
    return out


def _table(results: Sequence[SeriesChanges]) -> Markup:
    headers = ["series", "target", "metric", "near", "before", "after", "change", "95% CI", "p",
               "kind", "newest"]  # fmt: skip
    rows: list[list[Cell]] = [
        [r.series.series, r.series.target, r.series.metric, f.point.label_words(), f.before,
         f.after, pct(f.change_pct), interval(f), p_text(f.p_value), f.direction,
         "yes" if f.in_newest else ""]
        for r in results for f in r.findings
    ]  # fmt: skip
    return html_table(headers, rows)


def render_history_html(
    results: Sequence[SeriesChanges], *, cache_dir: Path | None = None, now: datetime | None = None
) -> str:
    # Series with a trend to show first; one-point series (nothing to compare yet) after.
    results = sorted(results, key=lambda r: len(r.series.points) < 2)
    charts = [series_chart(r) for r in results[:MAX_CHARTS]]
    regressions = sum(f.direction == REGRESSION for r in results for f in r.findings)
    facts = {
        "series": str(len(results)),
        "changes": f"{sum(len(r.findings) for r in results)} ({regressions} regressions)",
        "rule": "change points: E-divisive means with a t-test (Otava's method) from 6 points; "
        "below that, the last point against the one before (Mann-Whitney, Holm)",
        "drawn": f"dbscale {__version__}, "
        + (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }
    warnings = []
    if len(results) > MAX_CHARTS:
        warnings.append(f"{len(results) - MAX_CHARTS} more series not drawn (--series, --metric)")
    body = join([
        element("header", element("h1", "dbscale history"), facts_list(facts),
                warnings_box(warnings)),
        element("main", element("h2", "Changes"),
                element("div", _table(results), class_="table-wrap")
                if any(r.findings for r in results)
                else element("p", f"No changes found in {len(results)} series."),
                chart_figures(charts)),
    ])  # fmt: skip
    return html_document(
        title="dbscale history", body=body, charts=charts,
        bundle_js=bundle.javascript_bundle(cache_dir), schema=bundle.schema_url(),
    )  # fmt: skip
